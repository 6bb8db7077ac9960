/**
 * The reward configuration: every knob of the rule reward and of the LLM judge, with defaults.
 * The JSON Schema in config.schema.json mirrors this type key for key (a test holds them equal);
 * keys are snake_case because the same object travels in run configs read by the Python trainer.
 * This file holds no logic: reading and validating a config is resolve-config.ts.
 */

export interface AnswerConfig {
  /** Relative error accepted between a numeric answer and the gold (ChartQA relaxed accuracy). */
  relative_tolerance: number;
  /** Four-digit integer golds in 1000–2100 (years) must match exactly: 2019 vs 2020 is within 5% but wrong. */
  exact_years: boolean;
  /** How list answers score: 'f1' gives partial credit, 'exact' pays only for the whole set. Correct needs the whole set either way. */
  list_score: 'f1' | 'exact';
  /** Gold text at least this long (normalised characters) is graded with ANLS instead of exact match. */
  anls_min_length: number;
  /** ANLS threshold τ: an edit-distance ratio at or above it scores 0. */
  anls_threshold: number;
  /** An ANLS-graded answer counts as correct when its ANLS reaches this. */
  anls_correct_at: number;
  /** Answers with at least this many characters score 0 (DeepEyes uses 1000). 0 turns the rule off. */
  max_answer_chars: number;
  /** VISTA-style gate: accuracy is paid only when every turn is well-formed. */
  require_well_formed: boolean;
}

export interface FormatConfig {
  /** 'fraction': share of well-formed assistant turns in [0,1]. 'deepeyes': −1 when any turn is malformed or a tag is unbalanced, else 0. */
  mode: 'fraction' | 'deepeyes';
  /** Every assistant turn must contain a <think>…</think> block. */
  require_think: boolean;
  /** The final answer must be written inside <answer>…</answer>. */
  require_answer_tags: boolean;
}

export interface ToolUseConfig {
  /** Multiplies the positive part of the reward of a trajectory with no successful tool call. 1 disables it. */
  no_tool_factor: number;
  /** Replace accuracy by the Chain-of-Focus rank within the group (direct-correct 1 > tool-correct 0.8 > tool-wrong 0.5 > direct-wrong 0). */
  group_ranking: boolean;
}

export interface RepetitionConfig {
  enabled: boolean;
  /** Word n-gram length for the text-repetition check. */
  ngram_size: number;
  /** The check fires when one n-gram occurs more often than this within one assistant turn. */
  max_ngram_occurrences: number;
  /** The check fires when one call (same tool, same arguments) is made more often than this. */
  max_identical_calls: number;
  /** When the check fires the total reward is capped at this value (min(total, penalty)). */
  penalty: number;
}

export interface EfficiencyConfig {
  /** Assistant turns that cost nothing (a tool turn and an answer turn). */
  free_turns: number;
  /** At this many assistant turns the efficiency component reaches 0; linear in between. */
  max_turns: number;
}

export interface RewardWeights {
  /** Answer correctness score in [0,1] (rule, judge, or both — see judge.mode). */
  accuracy: number;
  /** Format component (see format.mode). */
  format: number;
  /** Conditional tool bonus: 1 when a tool call succeeded AND the answer is correct. */
  tool_bonus: number;
  /** Unconditional tool-use bonus: 1 when a tool call succeeded. Off by default: it is gamed with placeholder calls. */
  tool_use: number;
  /** Efficiency component: fewer assistant turns. */
  efficiency: number;
}

export type JudgeMode = 'replace' | 'average' | 'either';

export interface JudgeConfig {
  /** Ask an OpenAI-compatible chat model whether the answer matches the gold. */
  enabled: boolean;
  /** How a judge verdict combines with the rule score. */
  mode: JudgeMode;
  /** Base URL of the OpenAI-compatible API, up to and including /v1. */
  base_url: string;
  /** Model name sent in the request. */
  model: string;
  /** NAME of the environment variable that holds the API key (never the key itself). Unset or empty: no Authorization header. */
  api_key_env: string;
  /** Prompt template file with {question}, {gold}, {prediction}; null: the shipped env/rewards/judge-prompt.md. */
  prompt_file: string | null;
  temperature: number;
  max_tokens: number;
  /** Per-request timeout. */
  timeout_ms: number;
  /** The most one judgement may take, queueing, retries and waits included; then it fails soft. */
  deadline_ms: number;
  /** Retries after the first attempt on 429, 5xx, timeouts and network errors. */
  max_retries: number;
  /** First backoff delay; doubles each retry, with jitter. */
  backoff_initial_ms: number;
  /** Largest backoff delay. */
  backoff_max_ms: number;
  /** A Retry-After longer than this is not waited for: the judgement fails soft instead. */
  retry_after_max_ms: number;
  /** Requests in flight at once. */
  concurrency: number;
  /** Verdicts kept in the in-memory LRU cache. */
  cache_size: number;
  /** Optional JSONL file that persists verdicts across runs; null: memory only. */
  cache_file: string | null;
}

export interface RewardConfig {
  weights: RewardWeights;
  answer: AnswerConfig;
  format: FormatConfig;
  tool: ToolUseConfig;
  repetition: RepetitionConfig;
  efficiency: EfficiencyConfig;
  judge: JudgeConfig;
}

/**
 * Defaults, and why (README.md in this folder has the longer story):
 * - accuracy 0.8 + format 0.2 as DeepEyes; a conditional tool bonus of 0.2 rather than DeepEyes'
 *   1.2, and a no-tool factor of 0.8. Together a correct tool-using answer earns 1.2 and a correct
 *   direct answer 0.8 — the ≈1.1 vs ≈0.8 group rewards the seed paper reports — without making a
 *   useless call worth more than a right answer (DeepEyesV2 saw placeholder calls farmed).
 * - No unconditional tool bonus, no efficiency term: both are available, both are off.
 * - Repetition caps the total at −1, below any clean trajectory, so it dominates (VISTA).
 */
export const DEFAULT_REWARD_CONFIG: RewardConfig = {
  weights: { accuracy: 0.8, format: 0.2, tool_bonus: 0.2, tool_use: 0, efficiency: 0 },
  answer: {
    relative_tolerance: 0.05,
    exact_years: true,
    list_score: 'f1',
    anls_min_length: 24,
    anls_threshold: 0.5,
    anls_correct_at: 0.9,
    max_answer_chars: 1000,
    require_well_formed: false,
  },
  format: { mode: 'fraction', require_think: false, require_answer_tags: false },
  tool: { no_tool_factor: 0.8, group_ranking: false },
  repetition: { enabled: true, ngram_size: 8, max_ngram_occurrences: 2, max_identical_calls: 1, penalty: -1 },
  efficiency: { free_turns: 2, max_turns: 6 },
  judge: {
    enabled: false,
    mode: 'average',
    base_url: 'http://127.0.0.1:8000/v1',
    model: 'judge',
    api_key_env: 'VISTOOL_JUDGE_API_KEY',
    prompt_file: null,
    temperature: 0,
    max_tokens: 32,
    timeout_ms: 30000,
    deadline_ms: 45000,
    max_retries: 3,
    backoff_initial_ms: 500,
    backoff_max_ms: 10000,
    retry_after_max_ms: 60000,
    concurrency: 4,
    cache_size: 10000,
    cache_file: null,
  },
};
