/**
 * Which metrics the dashboard shows before the user picks, in an order that reads top to bottom
 * as the training story: the reward, what it is made of, and the accuracy; whether the model calls
 * tools, whether the calls hit the task's target (`tools/call_on_target_rate`), and how often the calls fail (the per-tool and per-error-class counts the trainer logs,
 * `tools/<tool>/calls`, `tools/<tool>/failed`, `errors/E1` … `errors/E6`:
 * trainer/vistool_trainer/rollouts/tool_metrics.py); how many groups DAPO's dynamic sampling kept
 * and dropped; how long it writes and how many turns it takes; then the optimiser's side (SFT loss
 * — a curriculum's perception loss before it — and the SFT probe, entropy, KL, clip fraction) and timing. Groups of these are drawn as one chart
 * each (chart-groups.ts).
 *
 * Defaults follow what the runs vary. With the runs' per-metric stats (RunSummary.metricStats), a
 * metric is shown only when some run has it on at least MIN_POINTS rows (fewer when the run is
 * shorter) and its values differ: `actor/kl` of a run with `kl_coef` 0 (zero at every step), a
 * `tools/*\/failed` with two points, a reward component that never moves, stay in the picker. The
 * reward and the accuracy are always shown: they are the headline even when flat. Without stats
 * (an older host) every metric of the list above that the runs log is shown. A veRL run's reward
 * is `critic/score/mean` (its trainer's name for the mean sequence score) and its timings are
 * `timing_s/*`.
 */

const REWARD = ['reward/mean', 'critic/score/mean'];
/** Always shown when logged: the story's headline. */
const HEADLINE = new Set([...REWARD, 'acc/mean']);
const REWARD_COMPONENT = /^reward\/(?!mean$)[^/]+$/;
// Beside the call rate, the share of calls that acted on the task's target (issue 43): a call rate alone is not evidence of use.
const BEFORE_COUNTS = ['acc/mean', 'tool/call_rate', 'tools/call_on_target_rate', 'tool/error_rate'];
const SAMPLING = ['sampling/kept_groups', 'sampling/dropped_groups'];
const AFTER_COUNTS = ['response_length/mean', 'num_turns/mean', 'turns/mean', 'perception/loss', 'sft/loss'];
const SFT_PROBE = /^sft\/probe_.+_acc$/;
const OPTIMISER = ['actor/entropy', 'actor/kl', 'actor/pg_clipfrac'];
const TOOL_COUNT = /^tools\/(.+)\/(calls|failed)$/;
const ERROR_COUNT = /^errors\/E([1-6])$/;
/** Rows a metric needs (in some run) to be a default: a line, not a dot or two. */
export const MIN_POINTS = 3;

export interface MetricStats {
  count: number;
  min: number;
  max: number;
}

/** What the defaults know of each shown run: its training rows and per-metric stats (absent from an older host). */
export interface RunMetricFacts {
  rows: number;
  stats?: Readonly<Record<string, MetricStats>>;
}

/** The per-tool counts (each tool's calls, then its failures; tools by name), then errors/E1 … E6. */
function toolAndErrorCounts(available: string[]): string[] {
  const tools = available.flatMap((name) => {
    const match = TOOL_COUNT.exec(name);
    return match ? [{ name, tool: match[1] as string, failed: match[2] === 'failed' }] : [];
  });
  tools.sort((a, b) => (a.tool < b.tool ? -1 : a.tool > b.tool ? 1 : Number(a.failed) - Number(b.failed)));
  const errors = available.filter((name) => ERROR_COUNT.test(name)).sort();
  return [...tools.map((t) => t.name), ...errors];
}

/**
 * Whether a metric moves in some run: enough points, and not one value throughout. A run shorter
 * than MIN_POINTS rows (a veRL smoke of one step) cannot say whether anything moves: there every
 * metric it logs counts. True when no run says (no stats).
 */
export function varies(metric: string, runs: readonly RunMetricFacts[]): boolean {
  const told = runs.filter((run) => run.stats !== undefined);
  if (told.length === 0) return true;
  return told.some((run) => {
    const stats = run.stats?.[metric];
    if (stats === undefined) return false;
    return run.rows < MIN_POINTS ? stats.count > 0 : stats.count >= MIN_POINTS && stats.max > stats.min;
  });
}

export function defaultMetrics(available: string[], runs: readonly RunMetricFacts[] = []): string[] {
  const present = new Set(available);
  const reward = REWARD.find((name) => present.has(name));
  const timing = available.filter((name) => name.startsWith('timing/') || name.startsWith('timing_s/')).sort();
  const components = available.filter((name) => REWARD_COMPONENT.test(name)).sort();
  const probes = available.filter((name) => SFT_PROBE.test(name)).sort();
  const chosen = [
    ...(reward ? [reward] : []),
    ...components,
    ...BEFORE_COUNTS.filter((name) => present.has(name)),
    ...toolAndErrorCounts(available),
    ...SAMPLING.filter((name) => present.has(name)),
    ...AFTER_COUNTS.filter((name) => present.has(name)),
    ...probes,
    ...OPTIMISER.filter((name) => present.has(name)),
    ...timing,
  ].filter((name) => HEADLINE.has(name) || varies(name, runs));
  return chosen.length > 0 ? chosen : [...available].sort().slice(0, 6);
}

/** Groups metric names by their prefix (`actor/kl` → `actor`) for the picker. */
export function groupByPrefix(names: string[]): Map<string, string[]> {
  const groups = new Map<string, string[]>();
  for (const name of [...names].sort()) {
    const prefix = name.includes('/') ? name.slice(0, name.indexOf('/')) : 'other';
    groups.set(prefix, [...(groups.get(prefix) ?? []), name]);
  }
  return groups;
}
