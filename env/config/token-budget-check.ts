/**
 * `vistool config validate`'s token-budget check for the bundled trainer's vLLM rollouts: the
 * engine holds at most VLLM_MAX_MODEL_LEN tokens a conversation (trainer/vistool_trainer/
 * rollouts/vllm_sampler.py, MAX_MODEL_LEN_CAP), and a turn past it ends its episode. With a
 * Qwen2.5-VL hub model the opening prompt's text is measured and its image can take up to
 * ⌊max_pixels / 784⌋ tokens (prompt-token-budget.ts), so a budget that a large image overflows is
 * reported with its numbers before the run.
 */
import type { RunConfig } from '../../protocol/run-config.js';
import { episodeBudget, promptBudget } from './prompt-token-budget.js';
import { type ConfigProblem, problem } from './problem.js';

/** The bundled trainer's vLLM engine's max_model_len (vllm_sampler.py MAX_MODEL_LEN_CAP). */
export const VLLM_MAX_MODEL_LEN = 16384;

/** A warning when an episode at the pixel bounds would not fit the vLLM engine, or nothing. */
export function tokenBudgetProblems(config: RunConfig, raw: Record<string, unknown>): ConfigProblem[] {
  const { policy, rl } = config;
  if (policy.model === 'micro' || !rl.enabled || rl.rollout_engine !== 'vllm' || config.engine === 'verl') return [];
  const prompt = promptBudget(config);
  const episode = episodeBudget(config, prompt);
  const firstTurn = prompt.promptTokens + rl.max_new_tokens;
  if (episode.totalTokens <= VLLM_MAX_MODEL_LEN) return [];
  const policyRaw = raw.policy as Record<string, unknown> | undefined;
  const pointer = policyRaw !== undefined && 'max_pixels' in policyRaw ? '/policy/max_pixels' : '/rl/rollout_engine';
  const numbers = `the opening prompt takes up to ${prompt.promptTokens} tokens (${prompt.textTokens} of text: ${prompt.textFrom}; ${prompt.imageTokens} for an image at max_pixels ${prompt.bounds.maxPixels}, ${prompt.boundsFrom}), and a whole episode up to ${episode.totalTokens} (${config.env.max_turns} turn(s) × rl.max_new_tokens ${rl.max_new_tokens}, ${episode.imageObservations} edited image(s) of ${prompt.imageTokens} tokens, ${episode.observations} observation(s))`;
  const fix = `Lower policy.max_pixels (each 784 pixels is one image token), rl.max_new_tokens or env.max_turns.`;
  const where = firstTurn > VLLM_MAX_MODEL_LEN
    ? `even the first turn (${firstTurn} tokens with its reply) does not fit, so an image near max_pixels ends its episode at once`
    : 'a long episode with large images ends early when its prompt stops fitting';
  return [problem({ code: 'rl/token-budget', severity: 'warning', source: 'semantic', pointer, message: `rl.rollout_engine 'vllm' holds at most ${VLLM_MAX_MODEL_LEN} tokens a conversation, but ${numbers}: ${where}. ${fix}` })];
}
