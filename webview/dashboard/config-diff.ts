/**
 * Which run-config keys differ between compared runs: the dashboard's config diff. Pure and
 * DOM-free (tested without a browser). Configs are flattened to key paths (`rl.group_size`):
 * objects are walked, while arrays and scalars are leaves compared as whole values, so a changed
 * list of tasks is one row, not one per index. A key missing from a run's config is `null` in
 * that run's column, which differs from any value it has elsewhere (an explicit JSON null included).
 */

export interface ConfigDiffRow {
  /** Dotted key path; a key that holds a dot itself is written in brackets (`a["b.c"]`). */
  key: string;
  /** One entry per config, in order: the value as canonical JSON text (object keys sorted), or null where the key is absent. */
  values: (string | null)[];
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** JSON text with every object's keys sorted, so equal values compare equal however they were written. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (isPlainObject(value)) {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

function joinKey(prefix: string, key: string): string {
  if (key === '' || key.includes('.') || key.includes('[')) return `${prefix}[${JSON.stringify(key)}]`;
  return prefix === '' ? key : `${prefix}.${key}`;
}

/** Every leaf of a config by key path, in the config's own order; an empty object is a leaf. */
export function flattenConfig(config: Record<string, unknown>, prefix = '', out = new Map<string, string>()): Map<string, string> {
  for (const [key, value] of Object.entries(config)) {
    const path = joinKey(prefix, key);
    if (isPlainObject(value) && Object.keys(value).length > 0) flattenConfig(value, path, out);
    else out.set(path, canonicalJson(value));
  }
  return out;
}

/** The keys whose values are not the same in every config, in order of first appearance (first config first). */
export function configDiff(configs: Record<string, unknown>[]): ConfigDiffRow[] {
  const flat = configs.map((c) => flattenConfig(c));
  const keys = new Set<string>();
  for (const f of flat) for (const key of f.keys()) keys.add(key);
  const rows: ConfigDiffRow[] = [];
  for (const key of keys) {
    const values = flat.map((f) => f.get(key) ?? null);
    if (values.some((v) => v !== values[0])) rows.push({ key, values });
  }
  return rows;
}

/**
 * The step budgets a run's config asks for, the stage each belongs to, and the metric that counts
 * its steps: a config says what was asked (sft.steps 1500), the run what ran (an SFT phase or a
 * time cap may end a stage early), and the diff shows both.
 */
const RAN_BY: Readonly<Record<string, { stage: 'sft' | 'rl' | 'perception'; metric: string }>> = {
  'sft.steps': { stage: 'sft', metric: 'sft/step' },
  'rl.steps': { stage: 'rl', metric: 'rl/step' },
  'curriculum.perception.steps': { stage: 'perception', metric: 'perception/step' },
};

/** What a run says about the steps it ran: run.json's final state (RunSummary.ran) and its metrics' counters. */
export interface RanFacts {
  ran?: { sft?: number; rl?: number; perception?: number; timeCapped?: string[] };
  metricStats?: Readonly<Record<string, { max: number }>>;
}

/**
 * How many steps of a budget key a run ran: run.json's record when the run wrote one (its final
 * `state`), else the largest step of the stage's counter in its metrics (a run still going); null
 * when the key is no budget or the run says neither. `timeCap` when a time cap stopped the stage.
 */
export function stepsRan(key: string, run: RanFacts | undefined): { steps: number; from: 'run.json' | 'metrics'; timeCap: boolean } | null {
  const budget = RAN_BY[key];
  if (!budget || !run) return null;
  const timeCap = run.ran?.timeCapped?.includes(budget.stage) ?? false;
  const recorded = run.ran?.[budget.stage];
  if (recorded !== undefined) return { steps: recorded, from: 'run.json', timeCap };
  const counted = run.metricStats?.[budget.metric]?.max;
  return counted === undefined || !Number.isFinite(counted) ? null : { steps: counted, from: 'metrics', timeCap };
}
