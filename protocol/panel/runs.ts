/**
 * The runs a panel shows: their summaries (a complete snapshot, cheap to resend), their configs,
 * a rollout image's file, and a run's report.
 *
 * Types, method names and guards only: no behaviour, no DOM, no Node.
 */
import { hasFields, isString, isStringArray } from '../guards.js';
import { command, isEmpty, notification, request } from './messages.js';
import type { PlaygroundMetadata } from './playground.js';

/**
 * An evaluation of a checkpoint. Read from, in order of preference: `metrics.jsonl` lines with
 * `"stage": "eval"`, `run.json` `evaluations` ({label: metrics}), `results.json`, and
 * `eval/*.json` (see env/runs/evaluations.ts for the accepted shapes). Metric names follow the
 * trainer: `eval/acc_tools`, `eval/acc_no_tools`, `eval/tool_call_rate`, ...
 */
export interface EvalResult {
  label: string;
  step: number | null;
  /** The file it came from, relative to the run directory. */
  source: string;
  metrics: Record<string, number>;
}

/** What a panel knows about a run without loading its data: a complete snapshot, cheap to resend. */
export interface RunSummary {
  id: string;
  name: string;
  /** Absolute path of the run directory on the host. */
  path: string;
  /** run.json `status` (running, finished, failed, interrupted, ...), null when there is no run.json. */
  status: string | null;
  /** run.json `engine`: what trained the run when it was not vistool's own trainer ("verl"), else null. */
  engine: string | null;
  /** Unix seconds from run.json, when present. */
  startedAt: number | null;
  updatedAt: number | null;
  /** Complete training lines in metrics.jsonl (evaluation lines are counted in `evaluations`). */
  metricRows: number;
  metricNames: string[];
  /**
   * Per metric, over the rows read: how many rows have it and its range. The dashboard's defaults
   * show what varies (a metric flat at one value, or with a point or two, stays in the picker).
   */
  metricStats?: Record<string, { count: number; min: number; max: number }>;
  rolloutSteps: number;
  evaluations: EvalResult[];
  /** Problems reading the run (unreadable run.json, lines that are not JSON), for a banner. */
  problems: string[];
  /** Whether the run is read with a report.html (its own, or its folder of runs': env/runs/run-groups.ts), which `report/show` opens. */
  report?: boolean;
  /**
   * Runs of one group are seeds of one setting, shown as a mean with an interval (W&B's grouping):
   * run.json's `group`, else, for a run in a demo folder (one with summary.json beside its runs),
   * the run's folder name (`tools`, `text`), so `runs/demo-s1/tools` and `runs/demo-s2/tools` group.
   */
  group?: string;
  /**
   * The steps each stage ran, as run.json records them when the run ends (`state`: `sft_step`,
   * `rl_step`, `perception_step`), and the stages a time cap stopped (`time_caps_reached`): what
   * ran beside what the config asked (the dashboard's config diff). Absent while a run has not
   * finished; the diff then reads the steps from the metrics.
   */
  ran?: { sft?: number; rl?: number; perception?: number; timeCapped?: string[] };
  /**
   * Present while the host is still reading metrics.jsonl for the first time (a big file is read
   * in slices after the host starts answering): `metricRows` counts the rows read so far.
   */
  metricsLoading?: {
    bytesRead: number;
    bytesTotal: number;
    /** Lines sampled from the unread part, which the charts draw beyond the rows read (metric series' `preview`). */
    sampledLines?: number;
  };
}

/** A run's config.json as read by the host (env/runs/run-config.ts): the object, or null with why there is none. */
export interface RunConfigEntry {
  runId: string;
  config: Record<string, unknown> | null;
  problem: string | null;
}

/** Most runs one runs/configs request may name. */
export const MAX_CONFIG_RUNS = 64;

export const RunsListRequest = request<Record<string, never>, { runs: RunSummary[] }>()('runs/list', isEmpty);

/** The configs of the runs a dashboard compares, for its config diff. */
export const RunConfigsRequest = request<{ runIds: string[] }, { configs: RunConfigEntry[] }>()('runs/configs', (p): p is { runIds: string[] } =>
  hasFields(p, { runIds: (v) => isStringArray(v) && v.length >= 1 && v.length <= MAX_CONFIG_RUNS }),
);

/**
 * A rollout image's file on disk (`images/REF.png` in the run), and, for the task's own image, the
 * task record with its bands (looked up by prompt id in the run's task files), for the playground.
 */
export const RunImageRequest = request<{ runId: string; ref: string; promptId: string | null }, { path: string; metadata: PlaygroundMetadata | null }>()(
  'runs/image',
  (p): p is { runId: string; ref: string; promptId: string | null } => hasFields(p, { runId: isString, ref: isString, promptId: (v) => v === null || isString(v) }),
);

/** Open the report.html a run is read with: the VS Code host in an editor tab; a browser opens `report/<runId>/` itself. */
export const ShowReportCommand = command<{ runId: string }>()('report/show', (p): p is { runId: string } => hasFields(p, { runId: isString }));

/** Every run's summary, sent on ready and whenever any run directory changes. */
export const RunsChangedNotification = notification<{ runs: RunSummary[] }>()('runs/didChange', (p): p is { runs: RunSummary[] } => hasFields(p, { runs: Array.isArray }));
