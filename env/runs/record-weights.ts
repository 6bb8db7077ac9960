/**
 * The reward weights of a rollout record that does not carry them (records written before the
 * trainer and the veRL bridge wrote `reward_weights`), so the viewer can still show the reward's
 * arithmetic: weight × value per term and the sum. Candidates, in order: the reward config the run
 * scored with (logs/reward-config.json, which the trainer and the bridge write), the run config's
 * `rewards.weights`, and the env server's default reward config. A candidate is used only when the
 * record's breakdown, weighted by it, reproduces the record's reward (protocol/reward-breakdown.ts):
 * weights that do not explain the number are never shown as if they did.
 *
 * Read-only: reads the run's files, never writes them.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { RolloutRecord } from '../../protocol/panel-protocol.js';
import { explainReward } from '../../protocol/reward-breakdown.js';
import { isRecord } from '../../protocol/guards.js';
import { DEFAULT_REWARD_CONFIG } from '../rewards/config.js';

function numbers(value: unknown): Record<string, number> | null {
  if (!isRecord(value)) return null;
  const out: Record<string, number> = {};
  for (const [key, v] of Object.entries(value)) if (typeof v === 'number' && Number.isFinite(v)) out[key] = v;
  return Object.keys(out).length > 0 ? out : null;
}

async function jsonOf(path: string): Promise<unknown> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as unknown;
  } catch {
    return null;
  }
}

/** The weights that explain `record`'s reward and where they come from; null when it has its own or none reproduces it. */
export async function inferWeights(record: RolloutRecord, runDir: string): Promise<{ weights: Record<string, number>; source: string } | null> {
  const breakdown = record.reward_breakdown;
  if (!breakdown || Object.keys(breakdown).length === 0 || (record.reward_weights && Object.keys(record.reward_weights).length > 0)) return null;
  if (typeof record.reward !== 'number') return null;
  const scored = await jsonOf(join(runDir, 'logs', 'reward-config.json'));
  const config = await jsonOf(join(runDir, 'config.json'));
  const candidates: [Record<string, number> | null, string][] = [
    [numbers(isRecord(scored) ? scored.weights : null), "the run's logs/reward-config.json"],
    [numbers(isRecord(config) && isRecord(config.rewards) ? config.rewards.weights : null), "the run config's rewards.weights"],
    [{ ...DEFAULT_REWARD_CONFIG.weights }, "the env server's default reward config"],
  ];
  for (const [weights, source] of candidates) {
    if (weights && explainReward(breakdown, weights, record.reward)?.reproduces === true) return { weights, source };
  }
  return null;
}

/** A record, with the weights that explain its reward when it has none of its own, and where they came from. */
export async function withWeights(record: RolloutRecord, runDir: string): Promise<{ record: RolloutRecord; inferredWeights?: string }> {
  const inferred = await inferWeights(record, runDir);
  return inferred ? { record: { ...record, reward_weights: inferred.weights }, inferredWeights: inferred.source } : { record };
}
