/**
 * Evaluation results of a run, gathered from every place a run may keep them. Accepted shapes
 * (only finite numbers are kept; metric names as the trainer writes them, e.g.
 * `eval/acc_tools`, `eval/acc_no_tools`, `eval/tool_call_rate`, `eval/n`):
 *
 *   metrics.jsonl   lines with "stage": "eval", a "label" and a "step" (the trainer's own record)
 *   run.json        "evaluations": {"<label>": {"eval/acc_tools": 0.4, ...}, ...}
 *   results.json    {"<label>": {...metrics}}  or  {"evaluations": {"<label>": {...}}}
 *                   or  [{"label": "...", "step": 12, "metrics": {...}}, ...]
 *   eval/<name>.json  {"label"?: "...", "step"?: 12, "metrics": {...}}  or a flat {...metrics};
 *                   the label defaults to <name>
 *
 * When two places hold the same label, the first in the list above wins (it has the step).
 * Never writes anything.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { EvalResult } from '../../protocol/panel-protocol.js';
import { isRecord } from '../../protocol/guards.js';

function numbersOf(value: unknown): Record<string, number> {
  const out: Record<string, number> = {};
  if (!isRecord(value)) return out;
  for (const [key, entry] of Object.entries(value)) if (typeof entry === 'number' && Number.isFinite(entry) && key !== 'step') out[key] = entry;
  return out;
}

function stepOf(value: unknown): number | null {
  return isRecord(value) && typeof value.step === 'number' && Number.isFinite(value.step) ? value.step : null;
}

/** Results from one parsed results document (results.json or an eval/*.json file). */
export function evalResultsFromDocument(document: unknown, source: string, defaultLabel: string | null): EvalResult[] {
  if (Array.isArray(document)) {
    return document.flatMap((entry, i) => {
      if (!isRecord(entry)) return [];
      const label = typeof entry.label === 'string' ? entry.label : `${defaultLabel ?? 'eval'} ${i + 1}`;
      return [{ label, step: stepOf(entry), source, metrics: numbersOf(entry.metrics ?? entry) }];
    });
  }
  if (!isRecord(document)) return [];
  if (isRecord(document.evaluations)) return labelMap(document.evaluations, source);
  if (isRecord(document.metrics) || defaultLabel !== null) {
    const label = typeof document.label === 'string' ? document.label : (defaultLabel ?? 'eval');
    return [{ label, step: stepOf(document), source, metrics: numbersOf(document.metrics ?? document) }];
  }
  return labelMap(document, source);
}

function labelMap(map: Record<string, unknown>, source: string): EvalResult[] {
  return Object.entries(map)
    .filter(([, metrics]) => isRecord(metrics))
    .map(([label, metrics]) => ({ label, step: stepOf(metrics), source, metrics: numbersOf(isRecord(metrics) && isRecord(metrics.metrics) ? metrics.metrics : metrics) }));
}

async function readJson(path: string): Promise<{ value: unknown } | { error: string } | null> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    return null;
  }
  try {
    return { value: JSON.parse(text) as unknown };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

/** Results from results.json and eval/*.json (run.json and metrics.jsonl are read by their owners). */
export async function readEvalFiles(runDir: string): Promise<{ results: EvalResult[]; problems: string[] }> {
  const results: EvalResult[] = [];
  const problems: string[] = [];
  const top = await readJson(join(runDir, 'results.json'));
  if (top && 'error' in top) problems.push(`results.json is not valid JSON (${top.error})`);
  else if (top) results.push(...evalResultsFromDocument(top.value, 'results.json', null));
  let names: string[];
  try {
    names = (await readdir(join(runDir, 'eval'))).filter((n) => n.endsWith('.json')).sort();
  } catch {
    names = [];
  }
  for (const name of names) {
    const parsed = await readJson(join(runDir, 'eval', name));
    if (parsed && 'error' in parsed) problems.push(`eval/${name} is not valid JSON (${parsed.error})`);
    else if (parsed) results.push(...evalResultsFromDocument(parsed.value, `eval/${name}`, name.replace(/\.json$/, '')));
  }
  return { results, problems };
}

/** Merges lists in priority order: a label already present is not added again. */
export function mergeEvaluations(...lists: EvalResult[][]): EvalResult[] {
  const seen = new Set<string>();
  const merged: EvalResult[] = [];
  for (const list of lists) {
    for (const result of list) {
      if (seen.has(result.label)) continue;
      seen.add(result.label);
      merged.push(result);
    }
  }
  return merged;
}

export function evaluationsFromRunJson(run: unknown): EvalResult[] {
  return isRecord(run) && isRecord(run.evaluations) ? labelMap(run.evaluations, 'run.json') : [];
}
