/**
 * Generated from env/rewards/config.schema.json by scripts/generate-record-types.ts (npm run gen:types).
 * Do not edit: change the schema and regenerate.
 */

/**
 * How trajectories are scored: weights of the additive components, answer matching, format, tool use, repetition, efficiency and the optional LLM judge. reward = Σ weights × components, then × tool.no_tool_factor on the positive part when no tool call succeeded, then capped at repetition.penalty when the repetition check fires. See env/rewards/README.md.
 */
export interface RewardConfig {
  /**
   * Weight of each additive reward component.
   */
  weights: {
    /**
     * Answer correctness score in [0,1] (rule, judge, or both — see judge.mode). DeepEyes uses 0.8.
     */
    accuracy: number;
    /**
     * Format component: share of well-formed turns, or DeepEyes' −1/0 (see format.mode). DeepEyes uses 0.2.
     */
    format: number;
    /**
     * Conditional tool bonus: paid when a tool call succeeded AND the answer is correct. DeepEyes uses 1.2; 0.2 with the 0.8 no-tool factor gives 1.2 vs 0.8 for tool vs direct correct answers.
     */
    tool_bonus: number;
    /**
     * Unconditional tool-use bonus (a tool call succeeded, right or wrong). Off by default: unconditional bonuses get gamed with placeholder calls.
     */
    tool_use: number;
    /**
     * Efficiency component: 1 up to efficiency.free_turns assistant turns, 0 at efficiency.max_turns.
     */
    efficiency: number;
  };
  /**
   * Rule-based answer matching.
   */
  answer: {
    /**
     * Relative error accepted for numeric answers (ChartQA relaxed accuracy: 0.05). Exact when the gold is 0.
     */
    relative_tolerance: number;
    /**
     * Gold answers that are four-digit integers in 1000–2100 (years) must match exactly.
     */
    exact_years: boolean;
    /**
     * List answers: 'f1' gives partial credit for partly right lists, 'exact' pays only for the whole set. 'correct' needs the whole set either way.
     */
    list_score: 'f1' | 'exact';
    /**
     * Text golds at least this many characters long (after normalisation) are graded with ANLS instead of exact match.
     */
    anls_min_length: number;
    /**
     * ANLS threshold τ: an edit-distance ratio at or above it scores 0 (DocVQA: 0.5).
     */
    anls_threshold: number;
    /**
     * An ANLS-graded answer counts as correct when its ANLS reaches this.
     */
    anls_correct_at: number;
    /**
     * Answers with at least this many characters score 0 (DeepEyes: 1000). 0 turns the rule off.
     */
    max_answer_chars: number;
    /**
     * Pay accuracy only when every assistant turn is well-formed (VISTA).
     */
    require_well_formed: boolean;
  };
  /**
   * Per-turn well-formedness: every assistant turn has a parseable tool call or a final answer, with balanced tags.
   */
  format: {
    /**
     * 'fraction': share of well-formed assistant turns, in [0,1]. 'deepeyes': −1 when any turn is malformed or a tag is unbalanced, else 0.
     */
    mode: 'fraction' | 'deepeyes';
    /**
     * Every assistant turn must contain a <think>…</think> block.
     */
    require_think: boolean;
    /**
     * The final answer must be written inside <answer>…</answer>.
     */
    require_answer_tags: boolean;
  };
  /**
   * Tool-use shaping.
   */
  tool: {
    /**
     * Multiplies the positive part of the reward of a trajectory without a successful tool call (the seed paper's down-weighting). 1 disables it.
     */
    no_tool_factor: number;
    /**
     * What the conditional tool bonus (weights.tool_bonus) asks of a correct answer's calls: 'success', a call that ran; 'on_target', a call that ran on the task's target (target "on": the gold call's labels, geometry's named points, env/episodes/call-target.ts). With 'on_target', a call only partly on target, off target or with no known target (a task without gold calls) earns no bonus, and a note says why. The no-tool factor keeps asking for a call that ran (set no_tool_factor to 1 to switch it off).
     */
    tool_bonus_requires: 'success' | 'on_target';
    /**
     * Chain-of-Focus group ranking: accuracy becomes the rank within the group (direct-correct 1 > tool-correct 0.8 > tool-wrong 0.5 > direct-wrong 0); the tool bonus and no-tool factor are then off.
     */
    group_ranking: boolean;
  };
  /**
   * Repetition penalty (VISTA): when it fires the total reward is capped at the penalty, so it dominates every other term.
   */
  repetition: {
    /**
     * Run the repetition check.
     */
    enabled: boolean;
    /**
     * Word n-gram length for the text-repetition check.
     */
    ngram_size: number;
    /**
     * Fires when one word n-gram occurs more often than this within one assistant turn.
     */
    max_ngram_occurrences: number;
    /**
     * Fires when the same tool is called with the same arguments more often than this.
     */
    max_identical_calls: number;
    /**
     * The cap on the total reward when the check fires: reward = min(total, penalty).
     */
    penalty: number;
  };
  /**
   * Efficiency component (weights.efficiency): fewer assistant turns.
   */
  efficiency: {
    /**
     * Assistant turns that cost nothing (a tool turn and an answer turn).
     */
    free_turns: number;
    /**
     * At this many assistant turns the efficiency component reaches 0 (linear in between).
     */
    max_turns: number;
  };
  /**
   * Optional LLM-as-judge over an OpenAI-compatible chat-completions API. It fails soft: when it is down or answers garbage, the rule reward is used.
   */
  judge: {
    /**
     * Ask the judge for every answered trajectory.
     */
    enabled: boolean;
    /**
     * How the verdict combines with the rule score: 'replace' (judge alone), 'average' (mean of both; correct only when both agree), 'either' (max; correct when either says so).
     */
    mode: 'replace' | 'average' | 'either';
    /**
     * Base URL of the OpenAI-compatible API, including /v1 (requests go to <base_url>/chat/completions).
     */
    base_url: string;
    /**
     * Model name sent with each request.
     */
    model: string;
    /**
     * NAME of the environment variable holding the API key — never the key itself. When it is unset or empty no Authorization header is sent (local vLLM needs none).
     */
    api_key_env: string;
    /**
     * Prompt template with {question}, {gold} and {prediction}; null uses the shipped env/rewards/judge-prompt.md.
     */
    prompt_file: string | null;
    /**
     * Sampling temperature of the judge.
     */
    temperature: number;
    /**
     * Longest judge reply, in tokens.
     */
    max_tokens: number;
    /**
     * Per-request timeout in milliseconds; a timed-out request is retried.
     */
    timeout_ms: number;
    /**
     * The most one judgement may take in milliseconds, waiting for a slot, retries and Retry-After waits included. Past it the judgement fails soft and the rule reward stands, so a hanging or rate-limiting judge costs a step at most this. Keep it under the trainer's 120 s per env request.
     */
    deadline_ms: number;
    /**
     * Retries after the first attempt, on 429, 5xx, timeouts and network errors.
     */
    max_retries: number;
    /**
     * First retry delay in milliseconds; doubles each retry, with jitter.
     */
    backoff_initial_ms: number;
    /**
     * Largest retry delay in milliseconds.
     */
    backoff_max_ms: number;
    /**
     * A Retry-After longer than this (ms) is not waited for: the judgement fails soft instead.
     */
    retry_after_max_ms: number;
    /**
     * Judge requests in flight at once.
     */
    concurrency: number;
    /**
     * Verdicts kept in the in-memory LRU cache (keyed by model, prompt, question, gold and prediction).
     */
    cache_size: number;
    /**
     * JSONL file that persists verdicts across runs; null keeps them in memory only.
     */
    cache_file: string | null;
  };
}
