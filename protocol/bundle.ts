/**
 * The data of a static bundle (`vistool view --bundle`, env/view/bundle.ts writes it), as its page
 * reads it (webview/shared/static-backend.ts): `data/bundle.js` sets `window.__vistoolBundle` to
 * a BundleData; each `data/<run>/*.js` calls `window.__vistoolBundleChunk(key, BundleChunk)`.
 * Types only.
 */
import type { Annotation } from './annotation.js';
import type { EvalSetInfo } from './panel/evaluations.js';
import type { MetricSeriesResult, MetricTable } from './panel/metrics.js';
import type { RolloutRecord, StepFileInfo, StepIndex } from './panel/rollouts.js';
import type { RunConfigEntry, RunSummary } from './panel/runs.js';

/** What a series needs of an axis that does not depend on the question: where stages and SFT phases change, the x source, the tool-fading verdict. */
export type AxisFacts = Pick<MetricSeriesResult, 'xSource' | 'phases' | 'toolFading'>;

/** `data/bundle.js`: everything but the step and evaluation records. */
export interface BundleData {
  format: 'vistool-bundle';
  version: 1;
  runs: RunSummary[];
  configs: Record<string, RunConfigEntry>;
  tables: Record<string, MetricTable>;
  axes: Record<string, { step: AxisFacts; time: AxisFacts }>;
  steps: Record<string, StepFileInfo[]>;
  evalSets: Record<string, EvalSetInfo[]>;
  annotations: Record<string, { annotations: Annotation[]; problems: string[] }>;
  /** Chunk key (`<run>/step/<N>`, `<run>/eval/<key>`) → its script, relative to the page. */
  chunks: Record<string, string>;
}

/** One chunk: a step's or an evaluation's index and every record of it, by line. */
export interface BundleChunk {
  index: StepIndex;
  records: Record<number, { record: RolloutRecord; inferredWeights?: string }>;
}
