/**
 * Generated from schemas/metrics-line.schema.json by scripts/generate-record-types.ts (npm run gen:types).
 * Do not edit: change the schema and regenerate.
 */

/**
 * One line of a run's metrics.jsonl (docs/CONTRACTS.md): the step it belongs to, when it was written, the stage that wrote it, and metrics by veRL/TRL-style name (reward/mean, acc/mean, tool/call_rate, actor/pg_clipfrac, tools/<tool>/calls, errors/E1, eval/*). Metric values are numbers, or null where a step had nothing to average.
 */
export interface MetricsLine {
  /**
   * The run's global step (SFT and RL steps counted together).
   */
  step: number;
  /**
   * Unix seconds, as a float, when the line was written.
   */
  time: number;
  /**
   * What wrote the line: the perception stage of a curriculum (perception/* metrics), SFT, RL; eval lines carry eval/* metrics (and perception/* when a curriculum evaluates its perception tasks).
   */
  stage?: 'perception' | 'sft' | 'rl' | 'eval';
  /**
   * Eval lines: which evaluation (before, after, every-N).
   */
  label?: string;
  [k: string]: number | null | 'perception' | 'sft' | 'rl' | 'eval' | string | undefined;
}
