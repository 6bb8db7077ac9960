/**
 * Which metrics the dashboard shows before the user picks, in an order that reads top to bottom
 * as the training story: the reward and the accuracy; whether the model calls tools and how often
 * the calls fail; how long it writes and how many turns it takes; then the optimiser's side (SFT
 * loss, entropy, KL, clip fraction) and timing. Only those the runs actually log. The reward's
 * components stay in the picker: most runs log eight or more, several flat at zero, and they
 * crowded the story out. A veRL run's reward is `critic/score/mean` (its trainer's name for the
 * mean sequence score) and its timings are `timing_s/*`.
 */

const REWARD = ['reward/mean', 'critic/score/mean'];
const STORY = ['acc/mean', 'tool/call_rate', 'tool/error_rate', 'response_length/mean', 'num_turns/mean', 'sft/loss', 'actor/entropy', 'actor/kl', 'actor/pg_clipfrac'];

export function defaultMetrics(available: string[]): string[] {
  const present = new Set(available);
  const reward = REWARD.find((name) => present.has(name));
  const timing = available.filter((name) => name.startsWith('timing/') || name.startsWith('timing_s/')).sort();
  const chosen = [...(reward ? [reward] : []), ...STORY.filter((name) => present.has(name)), ...timing];
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
