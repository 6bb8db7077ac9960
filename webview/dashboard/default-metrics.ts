/**
 * Which metrics the dashboard shows before the user picks: reward and its components, accuracy,
 * tool call rate, response length, the actor's entropy, KL and clip fraction (veRL's actor/pg_clipfrac), and timing — in
 * that order, and only those the runs actually log. A veRL run's reward is `critic/score/mean`
 * (its trainer's name for the mean sequence score) and its timings are `timing_s/*`.
 */

const HEADLINE = ['reward/mean', 'acc/mean', 'tool/call_rate', 'response_length/mean', 'num_turns/mean', 'actor/entropy', 'actor/kl', 'actor/pg_clipfrac'];

export function defaultMetrics(available: string[]): string[] {
  const present = new Set(available);
  const rewardComponents = available.filter((name) => name.startsWith('reward/') && name !== 'reward/mean' && !/\/(std|min|max)$/.test(name)).sort();
  const timing = available.filter((name) => name.startsWith('timing/') || name.startsWith('timing_s/')).sort();
  const reward = ['reward/mean', 'critic/score/mean'].find((name) => present.has(name));
  const chosen = [
    ...(reward ? [reward] : []),
    ...rewardComponents,
    ...HEADLINE.slice(1).filter((name) => present.has(name)),
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
