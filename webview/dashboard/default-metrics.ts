/**
 * Which metrics the dashboard shows before the user picks, in an order that reads top to bottom
 * as the training story: the reward and the accuracy; whether the model calls tools and how often
 * the calls fail; how long it writes and how many turns it takes; then the optimiser's side (SFT
 * loss — a curriculum's perception loss before it —, entropy, KL, clip fraction) and timing. Only those the runs actually log. Right after the
 * call and error rates come the per-tool and per-error-class counts the trainer logs
 * (`tools/<tool>/calls`, `tools/<tool>/failed`, `errors/E1` … `errors/E6`;
 * trainer/vistool_trainer/rollouts/tool_metrics.py), as one group: each tool's calls then its
 * failures, tools by name, then the error classes in order, so which calls fail and why reads in
 * one place (the dashboard draws them as three charts with a line per tool or class:
 * chart-groups.ts). The reward's
 * components stay in the picker: most runs log eight or more, several flat at zero, and they
 * crowded the story out. A veRL run's reward is `critic/score/mean` (its trainer's name for the
 * mean sequence score) and its timings are `timing_s/*`.
 */

const REWARD = ['reward/mean', 'critic/score/mean'];
const BEFORE_COUNTS = ['acc/mean', 'tool/call_rate', 'tool/error_rate'];
const AFTER_COUNTS = ['response_length/mean', 'num_turns/mean', 'perception/loss', 'sft/loss', 'actor/entropy', 'actor/kl', 'actor/pg_clipfrac'];
const TOOL_COUNT = /^tools\/(.+)\/(calls|failed)$/;
const ERROR_COUNT = /^errors\/E([1-6])$/;

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

export function defaultMetrics(available: string[]): string[] {
  const present = new Set(available);
  const reward = REWARD.find((name) => present.has(name));
  const timing = available.filter((name) => name.startsWith('timing/') || name.startsWith('timing_s/')).sort();
  const chosen = [
    ...(reward ? [reward] : []),
    ...BEFORE_COUNTS.filter((name) => present.has(name)),
    ...toolAndErrorCounts(available),
    ...AFTER_COUNTS.filter((name) => present.has(name)),
    ...timing,
  ];
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
