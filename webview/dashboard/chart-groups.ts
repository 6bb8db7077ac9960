/**
 * Which chart draws which metrics. Most metrics have a chart of their own. The per-tool and
 * per-error-class counts (trainer/vistool_trainer/rollouts/tool_metrics.py) are drawn as groups,
 * one line per member, so they do not fill the page with a chart per tool and per class, most of
 * them flat at zero:
 *   tools/<tool>/calls for every tool  → "tools/*\/calls"  (a line per tool)
 *   tools/<tool>/failed for every tool → "tools/*\/failed" (a line per tool)
 *   errors/E1 … errors/E6              → "errors/E1–E6"   (a line per class)
 * and so are the reward's components, DAPO's kept and dropped groups and the SFT probe's rates:
 *   reward/<component> (not reward/mean) → "reward components" (a line per component)
 *   sampling/kept_groups, dropped_groups → "sampling/*_groups"
 *   sft/probe_<skill>_acc                → "sft/probe_*"
 *   tools/calls_on_target, _partly_on_target, _off_target, _target_unknown → "tools/calls_*_target"
 *   scan/<scanner>                       → "scan/*" (a line per scanner)
 * A group's chart stands where its first chosen member would. Every line of a group is drawn in
 * its run's colour (one colour per run on every chart); members differ by dash and point style.
 * Pure, for a unit test.
 */

export interface ChartSpec {
  /** The chart's name: its title, its card's data-metric, its PNG's name. */
  key: string;
  /** The metrics it draws, in order. */
  members: string[];
  /** For a group, each member's short name in the legend (the tool, the class); null for a single metric. */
  labels: string[] | null;
}

const GROUPS: { key: string; pattern: RegExp }[] = [
  { key: 'tools/*/calls', pattern: /^tools\/(.+)\/calls$/ },
  { key: 'tools/*/failed', pattern: /^tools\/(.+)\/failed$/ },
  { key: 'errors/E1–E6', pattern: /^errors\/(E[1-6])$/ },
  { key: 'reward components', pattern: /^reward\/((?!mean$)[^/]+)$/ },
  { key: 'sampling/*_groups', pattern: /^sampling\/(kept|dropped)_groups$/ },
  { key: 'sft/probe_*', pattern: /^sft\/probe_(.+)_acc$/ },
  // Issue 43: the calls by target (on, partly, off, unknown) and the scanners' counts.
  { key: 'tools/calls_*_target', pattern: /^tools\/calls_((?:partly_)?on_target|off_target|target_unknown)$/ },
  { key: 'scan/*', pattern: /^scan\/([a-z_]+)$/ },
];

export function chartSpecs(metrics: readonly string[]): ChartSpec[] {
  const specs: ChartSpec[] = [];
  const groups = new Map<string, ChartSpec>();
  for (const metric of metrics) {
    const group = GROUPS.find((g) => g.pattern.test(metric));
    if (!group) {
      specs.push({ key: metric, members: [metric], labels: null });
      continue;
    }
    const label = group.pattern.exec(metric)?.[1] ?? metric;
    let spec = groups.get(group.key);
    if (!spec) {
      spec = { key: group.key, members: [], labels: [] };
      groups.set(group.key, spec);
      specs.push(spec);
    }
    spec.members.push(metric);
    spec.labels?.push(label);
  }
  return specs;
}
