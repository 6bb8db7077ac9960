/**
 * The Runs view's shape: folders of runs (the demo's runs/demo, a sweep) as items holding their
 * runs, and the runs on their own. Editor-free (unit-tested under plain Node); runs-tree.ts turns
 * these into tree items.
 */
import { basename, join } from 'node:path';
import { REPORT_FILE } from '../../env/runs/run-groups.js';
import type { RunOverview } from './run-catalog.js';

/** A folder of runs as the view shows it. */
export interface RunGroupItem {
  kind: 'group';
  dir: string;
  name: string;
  runs: RunOverview[];
  /** The folder's report.html, when it has one (its runs share it). */
  report: string | null;
}

export type RunsTreeElement = RunOverview | RunGroupItem;

export function isRunGroupItem(value: unknown): value is RunGroupItem {
  return typeof value === 'object' && value !== null && (value as RunGroupItem).kind === 'group' && Array.isArray((value as RunGroupItem).runs);
}

/** The view's top level in the model's order (newest first): a run on its own where it is, a folder of runs where its first run is, holding its runs in that order. */
export function runsTreeRoots(runs: readonly RunOverview[]): RunsTreeElement[] {
  const roots: RunsTreeElement[] = [];
  const groups = new Map<string, RunGroupItem>();
  for (const run of runs) {
    if (run.group === null) {
      roots.push(run);
      continue;
    }
    let group = groups.get(run.group);
    if (!group) {
      group = { kind: 'group', dir: run.group, name: basename(run.group), runs: [], report: null };
      groups.set(run.group, group);
      roots.push(group);
    }
    group.runs.push(run);
    if (run.report === join(run.group, REPORT_FILE)) group.report = run.report;
  }
  return roots;
}

