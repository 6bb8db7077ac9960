/**
 * The panel host's answers to every request of the panel protocol (protocol/panel/handlers.ts's
 * RequestHandlers), over the runs a PanelBackend has open and its playground sessions. Each
 * answer reads run directories through env/runs/ or calls the tool engine; a static bundle's page
 * answers the same requests from its files (webview/shared/static-backend.ts).
 *
 * Nothing here executes what a panel or a rollout file contains; the one thing written in a run
 * directory is annotations.jsonl, on a person's save (env/runs/annotations.ts).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { formatToolCall } from '../actions/format.js';
import { listTools } from '../tools/registry.js';
import type { RequestHandlers } from '../../protocol/panel/handlers.js';
import type { EvalComparison, EvalSide } from '../../protocol/panel/evaluations.js';
import type { PlaygroundMetadata } from '../../protocol/panel/playground.js';
import type { RunSummary } from '../../protocol/panel/runs.js';
import type { PlaygroundSessions } from './playground-sessions.js';
import type { RunSource } from '../runs/run-source.js';
import { findTaskRecord } from '../runs/run-task-record.js';
import { readRunConfig } from '../runs/run-config.js';
import { searchRollouts } from '../runs/rollout-search.js';
import { compareEvaluations, taskTimeline } from '../runs/eval-sets.js';
import { runEvalSummary } from '../../protocol/eval-summary.js';
import { withWeights } from '../runs/record-weights.js';
import { deleteAnnotation, readAnnotations, saveAnnotation } from '../runs/annotations.js';
import type { ReplayPolicyState } from './replay-policy.js';
import { replayRolloutWithheld } from './rollout-replay.js';

/** What the answers need of their backend. */
export interface PanelRequestContext {
  summaries(): RunSummary[];
  /** The open run with this id; throws, naming the open runs, when there is none. */
  run(id: string): RunSource;
  readonly playground: PlaygroundSessions;
  /** The policy a training rollout is replayed against, or why there is none; asked at every request (a VS Code setting can change). */
  replayPolicy(): ReplayPolicyState;
}

export function panelRequestHandlers(host: PanelRequestContext): RequestHandlers {
  return {
    'runs/list': () => ({ runs: host.summaries() }),
    'runs/configs': async ({ runIds }) => {
      const runs = runIds.map((id) => host.run(id));
      return { configs: await Promise.all(runs.map(async (run) => ({ runId: run.id, ...(await readRunConfig(run.dir)) }))) };
    },
    'runs/image': ({ runId, ref, promptId }) => runImage(host.run(runId), ref, promptId),
    'metrics/rows': ({ runId, from, columns }) => {
      const run = host.run(runId);
      return { runId: run.id, from, total: run.metrics.rowCount, table: run.metrics.slice(from, columns) };
    },
    'metrics/series': ({ runId, ...query }) => {
      const run = host.run(runId);
      return { runId: run.id, ...run.charts.query(query) };
    },
    'rollouts/steps': async ({ runId }) => {
      const run = host.run(runId);
      return { runId: run.id, steps: await run.stepFiles() };
    },
    'rollouts/index': async ({ runId, step }) => {
      const run = host.run(runId);
      return (await run.stepIndex(step)).index(run.id);
    },
    'rollouts/record': async ({ runId, step, line }) => {
      const run = host.run(runId);
      return { runId: run.id, step, line, ...(await withWeights(await (await run.stepIndex(step)).record(line), run.dir)) };
    },
    'rollouts/search': async ({ runId, ...query }, signal) => {
      const run = host.run(runId);
      return { runId: run.id, ...(await searchRollouts(run.dir, await run.stepFiles(), query, { signal })) };
    },
    'rollouts/timeline': async ({ runId, promptId }, signal) => {
      const run = host.run(runId);
      const found = await taskTimeline(run.dir, promptId, await run.stepFiles(), await run.evalSets(), signal);
      return { runId: run.id, promptId, ...found };
    },
    'evals/list': async ({ runId }) => {
      const run = host.run(runId);
      return { runId: run.id, sets: await run.evalSets() };
    },
    'evals/compare': ({ a, b }) => compare(host, a, b),
    'evals/summary': async ({ runId }) => {
      const run = host.run(runId);
      const sets = await Promise.all(
        (await run.evalSets()).map(async (info) => {
          const { set, index } = await run.evalIndex(info.key);
          return { key: set.key, label: set.label, step: set.step, rollouts: (await index.index(run.id)).rollouts };
        }),
      );
      return runEvalSummary(run.id, sets);
    },
    'evals/record': async ({ runId, key, line }) => {
      const run = host.run(runId);
      return { runId: run.id, key, line, ...(await withWeights(await (await run.evalIndex(key)).index.record(line), run.dir)) };
    },
    'annotations/list': async ({ runId }) => {
      const run = host.run(runId);
      return { runId: run.id, ...(await readAnnotations(run.dir)) };
    },
    'annotations/save': async ({ runId, ...input }) => {
      const run = host.run(runId);
      return { runId: run.id, annotation: await saveAnnotation(run.dir, input) };
    },
    'annotations/delete': async ({ runId, id }) => {
      const run = host.run(runId);
      await deleteAnnotation(run.dir, id);
      return { runId: run.id, id, deleted: true as const };
    },
    'tools/list': () => ({ tools: listTools().map((t) => ({ name: t.name, description: t.description, parameters: t.parameters })) }),
    'playground/open': (params) => host.playground.open(params),
    'playground/apply': ({ session, call }) => host.playground.apply(session, call),
    'playground/undo': ({ session }) => host.playground.undo(session),
    'playground/snapshot': ({ session }) => host.playground.snapshot(session),
    'calls/format': ({ calls, format }) => {
      if (format === 'json') return { text: JSON.stringify(calls.length === 1 ? calls[0] : calls, null, 2) };
      return { text: calls.map((call) => formatToolCall(call, format)).join('\n') };
    },
    'replay/availability': () => {
      const state = host.replayPolicy();
      return state.policy === null ? { available: false, policy: null, reason: state.reason } : { available: true, policy: state.policy.description, reason: null };
    },
    'replay/withheld': async ({ runId, step, line }, signal) => {
      const state = host.replayPolicy();
      if (state.policy === null) throw new Error(state.reason);
      const run = host.run(runId);
      const record = await (await run.stepIndex(step)).record(line);
      return { runId: run.id, step, line, ...(await replayRolloutWithheld(run.dir, record, state.policy, { signal })) };
    },
  };
}

/** Two kept evaluations task by task (eval-sets.ts); each side's index is read (and grown) first. */
async function compare(host: PanelRequestContext, a: EvalSide, b: EvalSide): Promise<EvalComparison> {
  const read = async (side: EvalSide) => {
    const run = host.run(side.runId);
    const { set, index } = await run.evalIndex(side.key);
    return { side: { ...side, runId: run.id, label: set.label, step: set.step }, rollouts: (await index.index(run.id)).rollouts };
  };
  const [left, right] = await Promise.all([read(a), read(b)]);
  return { a: left.side, b: right.side, ...compareEvaluations(left.rollouts, a.arm, right.rollouts, b.arm) };
}

/** A rollout image's file, and the task record's metadata when it is the task's own image. */
async function runImage(run: RunSource, ref: string, promptId: string | null): Promise<{ path: string; metadata: PlaygroundMetadata | null }> {
  // Image refs are content hashes: anything else could name a file outside images/.
  if (!/^[0-9a-f]{8,128}$/i.test(ref)) throw new Error(`'${ref}' is not an image ref (a content hash)`);
  const path = join(run.dir, 'images', `${ref}.png`);
  if (!existsSync(path)) throw new Error(`run '${run.id}' has no image ${ref} (looked for ${path})`);
  if (promptId === null) return { path, metadata: null };
  const found = await findTaskRecord(run.dir, promptId);
  return { path, metadata: found ? { name: `${promptId}.json`, text: found.line, source: `task ${promptId} in ${found.file}` } : null };
}
