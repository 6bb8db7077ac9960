/**
 * The opening prompt's token budget for a Qwen2.5-VL policy: its text (the system turn with the
 * tool list, the question, the chat template's tokens), measured with Qwen2.5's real tokenizer,
 * plus the most image tokens the task image can take at the run's pixel bounds. The veRL export
 * sets data.max_prompt_length from it and `vistool config validate` reports budgets it overflows.
 *
 * The text numbers come from `python bench/qwen_token_budgets.py` (docs/QWEN_FIXTURE.md, "Token
 * budgets with the real tokenizer", run of 2026-12-06): the first prompt of each generated task
 * kind as the trainer encodes it, tools on, the env server's own system prompt. The largest text
 * of each kind is kept; rerun the bench and update the table when the system prompt or the tool
 * list changes.
 */
import type { RunConfig } from '../../protocol/run-config.js';
import { maxImageTokens, type PixelBounds, QWEN2_5_VL_PROCESSOR } from './qwen-image-tokens.js';

export type GeneratedKind = RunConfig['data']['generate']['kind'];

/** Text tokens of the first prompt, the largest measured per kind (Qwen2.5 tokenizer, tools on, the server's system prompt). */
export const MEASURED_PROMPT_TEXT_TOKENS: Readonly<Record<GeneratedKind, number>> = {
  table: 1626,
  vbar: 1334,
  hbar: 1334,
  grouped: 1334,
  line: 1334,
  geometry: 999,
  // `--kinds search` (8 tasks, the same day): one tool (crop) in the system turn.
  search: 367,
};

/**
 * Room for a question longer than the generator's (a dataset's own tasks, such as ReFOCUS's, are
 * not what was measured): added to the measured text.
 */
export const QUESTION_HEADROOM_TOKENS = 256;

/**
 * The micro model's tokenizer is learned from the run's own corpus, so no measurement holds for
 * it: its text budget stays this round figure (the e2e passes its own, measured in the run).
 */
export const MICRO_PROMPT_TEXT_TOKENS = 2048;

export interface PromptBudget {
  /** The image processor's bounds the budget assumes (mm_processor_kwargs). */
  bounds: PixelBounds;
  /** Where the bounds come from, for comments and messages. */
  boundsFrom: string;
  /** Most tokens one image can take at the bounds. */
  imageTokens: number;
  /** Text tokens of the opening prompt, headroom included. */
  textTokens: number;
  /** How textTokens was found, for comments and messages. */
  textFrom: string;
  /** textTokens + imageTokens: data.max_prompt_length. */
  promptTokens: number;
}

/** The pixel bounds the processor will use: the run config's, else Qwen2.5-VL's own (the micro model's for micro). */
export function pixelBoundsOf(config: RunConfig): { bounds: PixelBounds; from: string } {
  const { policy } = config;
  if (policy.model === 'micro') return { bounds: { minPixels: policy.micro.min_pixels, maxPixels: policy.micro.max_pixels }, from: 'policy.micro.min_pixels, policy.micro.max_pixels' };
  const minPixels = policy.min_pixels ?? QWEN2_5_VL_PROCESSOR.minPixels;
  const maxPixels = policy.max_pixels ?? QWEN2_5_VL_PROCESSOR.maxPixels;
  const named = (key: 'min_pixels' | 'max_pixels') => (policy[key] === null ? `policy.${key} null: Qwen2.5-VL's ${key === 'min_pixels' ? minPixels : maxPixels}` : `policy.${key}`);
  return { bounds: { minPixels, maxPixels }, from: `${named('min_pixels')}, ${named('max_pixels')}` };
}

/** The task kinds a run's prompts can be: the generated kind when every split is generated, else every kind (a tasks file may hold any). */
export function kindsOf(config: RunConfig): GeneratedKind[] {
  const { data } = config;
  if (data.train === null && data.eval === null) return [data.generate.kind];
  return Object.keys(MEASURED_PROMPT_TEXT_TOKENS) as GeneratedKind[];
}

/** An upper bound on a text's tokens under a byte-level BPE (every token is at least one byte). */
export function byteBound(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/** The custom system prompts the run's arm can show (null: the server's own, which was measured). */
function customSystemPrompts(config: RunConfig): string[] {
  const prompt = config.policy.system_prompt as unknown;
  if (prompt === null || prompt === undefined) return [];
  if (typeof prompt === 'string') return [prompt];
  const arms = prompt as { tools?: string | null; no_tools?: string | null };
  const arm = config.env.tools ? arms.tools : arms.no_tools;
  return typeof arm === 'string' ? [arm] : [];
}

function textBudget(config: RunConfig): { tokens: number; from: string } {
  if (config.policy.model === 'micro') return { tokens: MICRO_PROMPT_TEXT_TOKENS, from: 'the micro tokenizer is the run\'s own: a round 2048, not measured' };
  const kinds = kindsOf(config);
  const measured = Math.max(...kinds.map((kind) => MEASURED_PROMPT_TEXT_TOKENS[kind]));
  const widest = kinds.find((kind) => MEASURED_PROMPT_TEXT_TOKENS[kind] === measured) as GeneratedKind;
  const custom = customSystemPrompts(config);
  // A custom system turn was not measured: its UTF-8 bytes bound its tokens, added on top of the
  // measured prompt (whose own system turn it replaces), so the sum stays an upper bound.
  const customTokens = custom.reduce((sum, text) => sum + byteBound(text), 0);
  const parts = [`${measured} measured (${widest}, Qwen2.5 tokenizer)`, `${QUESTION_HEADROOM_TOKENS} question headroom`];
  if (custom.length > 0) parts.push(`${customTokens} for policy.system_prompt (its UTF-8 bytes)`);
  return { tokens: measured + QUESTION_HEADROOM_TOKENS + customTokens, from: parts.join(' + ') };
}

/** The opening prompt's budget for this run config. */
export function promptBudget(config: RunConfig): PromptBudget {
  const { bounds, from } = pixelBoundsOf(config);
  const imageTokens = maxImageTokens(bounds);
  const text = textBudget(config);
  return { bounds, boundsFrom: from, imageTokens, textTokens: text.tokens, textFrom: text.from, promptTokens: text.tokens + imageTokens };
}

/** Text budget of one observation turn (what the tool did, or an error). */
export const OBSERVATION_TEXT_TOKENS = 128;

export interface EpisodeBudget {
  /** Observation turns: every turn but the last. */
  observations: number;
  /** Observations that carry an edited image (one per tool call). */
  imageObservations: number;
  /** Everything after the opening prompt: every turn's reply at its cap, the observations' text and images. */
  responseTokens: number;
  /** The last prompt plus its reply: the opening prompt and the whole response. */
  totalTokens: number;
}

/** The tokens a whole episode can take after the opening prompt: veRL's data.max_response_length. */
export function episodeBudget(config: RunConfig, budget: PromptBudget): EpisodeBudget {
  const { env, rl } = config;
  const observations = env.max_turns - 1;
  const imageObservations = Math.min(env.tools ? env.max_tool_calls : 0, observations);
  const responseTokens = env.max_turns * rl.max_new_tokens + observations * OBSERVATION_TEXT_TOKENS + imageObservations * budget.imageTokens;
  return { observations, imageObservations, responseTokens, totalTokens: budget.promptTokens + responseTokens };
}
