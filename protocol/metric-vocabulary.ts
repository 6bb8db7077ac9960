/**
 * One vocabulary for the metrics of both trainers. A veRL run logs its trainer's names
 * (`critic/score/mean`, `timing_s/gen`, `num_turns/mean`, …: veRL's `file` logger, docs/VERL.md);
 * vistool's trainer logs its own (`reward/mean`, `timing/gen_s`, `turns/mean`, …:
 * trainer/vistool_trainer/trainers/grpo.py). Where two names measure the same thing, the panels
 * show the vistool name and draw both runs on its chart, so a veRL run and a vistool run overlay.
 * Names that mean something else in each trainer, or exist in one only, are left as they are.
 * Pure.
 */

/** veRL's name → vistool's, for the same measurement. */
export const VERL_METRIC_ALIASES: Readonly<Record<string, string>> = {
  // The mean episode score: vistool_verl's reward function returns the env server's reward, which the trainer's reward/mean averages too.
  'critic/score/mean': 'reward/mean',
  // Assistant turns per episode.
  'num_turns/mean': 'turns/mean',
  // Seconds spent generating rollouts, and on the whole step.
  'timing_s/gen': 'timing/gen_s',
  'timing_s/step': 'timing/step_s',
  // Seconds spent updating the policy.
  'timing_s/update_actor': 'timing/train_s',
};

/** The name a metric is shown under. */
export function canonicalMetric(name: string): string {
  return VERL_METRIC_ALIASES[name] ?? name;
}

/** The name a run logs `canonical` under, given the names it logs: itself, or the alias it has; null when it has neither. */
export function loggedName(canonical: string, logged: readonly string[] | ReadonlySet<string>): string | null {
  const has = (name: string) => (logged instanceof Set ? logged.has(name) : (logged as readonly string[]).includes(name));
  if (has(canonical)) return canonical;
  for (const [alias, target] of Object.entries(VERL_METRIC_ALIASES)) if (target === canonical && has(alias)) return alias;
  return null;
}

/** The other names a canonical metric is logged under (for a tooltip). */
export function aliasesOf(canonical: string): string[] {
  return Object.entries(VERL_METRIC_ALIASES).filter(([, target]) => target === canonical).map(([alias]) => alias);
}
