/**
 * Turns a user's (partial) reward config into a full RewardConfig: validates it against
 * config.schema.json (unknown keys are errors), then fills every missing key from the defaults.
 * Errors name the key path, what was wrong and what is allowed, so a run fails before it starts.
 */
import Ajv, { type ErrorObject } from 'ajv';
import { DEFAULT_REWARD_CONFIG, type RewardConfig } from './config.js';
import rewardConfigSchema from './config.schema.json';

export { rewardConfigSchema };

export class RewardConfigError extends Error {
  override name = 'RewardConfigError';
}

const validate = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true }).compile(rewardConfigSchema);

function describe(error: ErrorObject, where: string): string {
  const path = `${where}${error.instancePath.replace(/\//gu, '.')}`;
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'additionalProperties':
      return `${path}: unknown key '${String(params.additionalProperty)}' (remove it, or check its spelling against env/rewards/config.schema.json)`;
    case 'enum':
      return `${path}: must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    default:
      return `${path}: ${error.message ?? 'is invalid'}`;
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function mergeDefaults<T>(defaults: T, given: unknown): T {
  if (!isPlainObject(defaults) || !isPlainObject(given)) return (given === undefined ? defaults : given) as T;
  const merged: Record<string, unknown> = { ...defaults };
  for (const [key, value] of Object.entries(given)) merged[key] = mergeDefaults((defaults as Record<string, unknown>)[key], value);
  return merged as T;
}

/**
 * Validates and completes a reward config. `where` names the config's place in the run config
 * for error messages (e.g. 'rewards' → "rewards.weights.acuracy: unknown key ...").
 */
export function resolveRewardConfig(input: unknown = {}, where = 'rewards'): RewardConfig {
  if (!validate(input)) {
    const problems = (validate.errors ?? []).map((e) => describe(e, where));
    throw new RewardConfigError(`invalid reward config:\n  ${problems.join('\n  ')}`);
  }
  const config = structuredClone(mergeDefaults(DEFAULT_REWARD_CONFIG, input));
  if (config.efficiency.max_turns <= config.efficiency.free_turns) {
    throw new RewardConfigError(
      `${where}.efficiency: max_turns (${config.efficiency.max_turns}) must be greater than free_turns (${config.efficiency.free_turns})`,
    );
  }
  if (config.judge.backoff_max_ms < config.judge.backoff_initial_ms) {
    throw new RewardConfigError(
      `${where}.judge: backoff_max_ms (${config.judge.backoff_max_ms}) must be at least backoff_initial_ms (${config.judge.backoff_initial_ms})`,
    );
  }
  return config;
}
