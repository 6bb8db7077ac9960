/**
 * `run.json` of an eval folder: status and times in the fields the dashboard reads (status,
 * pid, started_at, updated_at), plus what was evaluated. The `identity` part decides whether a
 * rerun into the same folder may resume: the results already there are only comparable with
 * new ones when the policy, the tasks file's bytes, the turn and call limits, the presentation,
 * the sampling settings, the reward config and whether replays run (--counterfactual) are the same. Concurrency, --limit and --tools may
 * change between runs.
 */
import { createHash } from 'node:crypto';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DEFAULT_LIMITS } from '../episodes/episode.js';
import { DEFAULT_PRESENTATION, type Presentation } from '../presentation/presentation.js';

export interface EvalIdentity {
  policy: string;
  tasks_sha256: string;
  max_turns: number;
  max_tool_calls: number;
  /** presentationHash() of the episodes' presentation (system turn, image view). */
  presentation_sha256: string;
  temperature: number;
  max_tokens: number;
  reward_config_sha256: string;
  /** Tools-arm episodes are replayed with their results withheld (--counterfactual). */
  counterfactual: boolean;
}

export interface EvalRunRecord {
  kind: 'eval';
  status: 'running' | 'finished' | 'interrupted' | 'failed';
  pid: number;
  started_at: number;
  updated_at: number;
  label: string;
  tasks_file: string;
  identity: EvalIdentity;
  error?: string;
}

export function sha256(text: string | Buffer): string {
  return createHash('sha256').update(text).digest('hex');
}

export async function readRunRecord(dir: string): Promise<EvalRunRecord | null> {
  let text: string;
  try {
    text = await readFile(join(dir, 'run.json'), 'utf8');
  } catch {
    return null;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new Error(`${join(dir, 'run.json')} is not JSON (${(err as Error).message}); remove it or choose another --out`, { cause: err });
  }
  if (typeof value !== 'object' || value === null || (value as { kind?: unknown }).kind !== 'eval') {
    throw new Error(`${dir} holds a run.json that is not an eval's (a training run?); choose another --out for the eval`);
  }
  return value as EvalRunRecord;
}

export async function writeRunRecord(dir: string, record: EvalRunRecord): Promise<void> {
  const path = join(dir, 'run.json');
  const temp = `${path}.${process.pid}.tmp`;
  await writeFile(temp, JSON.stringify(record, null, 2) + '\n');
  await rename(temp, path);
}

/** The identity's hash of a presentation (its parsed form has a fixed key order). */
export function presentationHash(presentation: Presentation): string {
  return sha256(JSON.stringify(presentation));
}

/**
 * Differences that forbid resuming, as "field: was X, now Y"; empty when compatible. A folder
 * written before the call limit, the presentation and --counterfactual were recorded ran with the
 * env's defaults and without replays.
 */
export function identityDifferences(before: EvalIdentity, now: EvalIdentity): string[] {
  const was: EvalIdentity = Object.assign({ max_tool_calls: DEFAULT_LIMITS.maxToolCalls, presentation_sha256: presentationHash(DEFAULT_PRESENTATION), counterfactual: false }, before);
  return (Object.keys(now) as (keyof EvalIdentity)[])
    .filter((key) => was[key] !== now[key])
    .map((key) => `${key}: was ${JSON.stringify(was[key])}, now ${JSON.stringify(now[key])}`);
}
