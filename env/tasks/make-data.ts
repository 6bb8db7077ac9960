/**
 * Draws the data for one image: a themed table (key column, categories, numbers) or a chart's
 * data (a labelled axis and one or more numeric series). Numbers are uniform integers of units
 * within the column's plausible range. Only the random stream decides; nothing is typed in.
 */
import type { DataColumn, DataTable } from './data-table.js';
import { drawLabels, LabelPoolError, type LabelPool, type LabelStyle } from './labels.js';
import type { Rng } from './prng.js';
import { CATEGORY_POOLS, SERIES_SETS, TABLE_THEMES, type CategoryPool, type ChartMeasure, type ColumnSpec, type TableTheme } from './vocabulary.js';

export interface TableDataOptions {
  rows: number;
  /** Columns including the key column. */
  columns: number;
  labels: LabelStyle;
  /** Probability that a number column with values ≥ 1000 shows thousands separators. */
  grouping: number;
  /** Use short header names (tiny canvases). */
  shortHeaders: boolean;
  /** Row keys to use, in this order, instead of drawing them (`--labels`). */
  keys?: readonly string[];
}

function randomUnits(rng: Rng, min: number, max: number, decimals: number): number {
  const scale = 10 ** decimals;
  return rng.int(Math.round(min * scale), Math.round(max * scale));
}

/** Columns whose header and values fit `maxChars` (tight canvases); the rest are left out. */
function fitting(spec: ColumnSpec, maxChars: number, shortHeaders: boolean): ColumnSpec | null {
  const header = shortHeaders ? (spec.short ?? spec.name) : spec.name;
  if (header.length > maxChars + 3) return null;
  if (spec.kind === 'number') return String(Math.round(spec.max)).length + spec.decimals <= maxChars + 1 ? spec : null;
  const values = spec.values.filter((v) => v.length <= maxChars);
  return values.length >= 2 ? { ...spec, values } : null;
}

function chooseColumns(rng: Rng, theme: TableTheme, count: number, maxChars: number, shortHeaders: boolean): ColumnSpec[] {
  const usable = theme.columns.flatMap((c) => fitting(c, maxChars, shortHeaders) ?? []);
  const categories = usable.filter((c) => c.kind === 'category');
  const numbers = usable.filter((c) => c.kind === 'number');
  const wanted = count - 1;
  if (wanted > categories.length + numbers.length) throw new LabelPoolError(`theme '${theme.id}' has only ${categories.length + numbers.length} columns besides the key whose text fits ${maxChars} characters; ${wanted} were asked for (a larger --image-size allows longer text)`);
  // At least one number column always; a category column whenever there is room for two.
  const categoryCount = wanted >= 2 ? Math.min(categories.length, rng.int(1, Math.max(1, Math.min(3, wanted - 1)))) : 0;
  if (wanted - categoryCount > numbers.length) throw new LabelPoolError(`theme '${theme.id}' has only ${numbers.length} number columns that fit ${maxChars} characters; ${wanted - categoryCount} were asked for`);
  const picked = new Set<ColumnSpec>([...rng.sample(categories, categoryCount), ...rng.sample(numbers, wanted - categoryCount)]);
  return usable.filter((c) => picked.has(c)); // theme order: categories first, as real tables do
}

export function makeTableData(rng: Rng, options: TableDataOptions, theme: TableTheme = rng.pick(TABLE_THEMES)): DataTable {
  const specs = chooseColumns(rng, theme, options.columns, options.labels.maxChars, options.shortHeaders);
  const keys = options.keys ? [...options.keys] : drawLabels(rng, theme.keyPool, options.rows, options.labels);
  const columns: DataColumn[] = [{ kind: 'key', name: options.shortHeaders ? theme.keyShort : theme.keyColumn }];
  for (const spec of specs) {
    const name = options.shortHeaders ? (spec.short ?? spec.name) : spec.name;
    if (spec.kind === 'category') columns.push({ kind: 'category', name, filter: spec.filter });
    else columns.push({ kind: 'number', name, noun: spec.noun, decimals: spec.decimals, grouping: spec.max >= 1000 && rng.chance(options.grouping) });
  }
  // Categories use a few values each, so filters match several rows.
  const categoryValues = specs.map((spec) => (spec.kind === 'category' ? rng.sample(spec.values, Math.min(spec.values.length, Math.max(2, Math.ceil(options.rows / 3)))) : []));
  const rows = keys.map((key) => [
    key,
    ...specs.map((spec, i) => (spec.kind === 'category' ? rng.pick(categoryValues[i] as string[]) : randomUnits(rng, spec.min, spec.max, spec.decimals))),
  ]);
  return { title: theme.title, entity: theme.entity, columns, rows };
}

export interface ChartDataOptions {
  categories: number;
  series: number;
  labels: LabelStyle;
  measure: ChartMeasure;
  pool?: CategoryPool;
  /** Probability of a time axis (years, months): line charts read best over time. */
  timeAxis?: number;
  /** Category labels to use, in this order, instead of drawing them (`--labels`). */
  given?: readonly string[];
  /**
   * Level data (the `level` family): every value clearly low, medium or high on a power-of-ten
   * scale, each level present at least once, so each level question has a clear answer and the
   * three answers are equally likely.
   */
  levels?: boolean;
}

/** Where level data puts a value, as fractions of the scale: a clear tenth of the scale from each bound at ¼ and ¾. */
const LEVEL_BANDS: readonly (readonly [number, number])[] = [[0.05, 0.15], [0.35, 0.65], [0.85, 1]];

/**
 * The values of one level-data series: the three levels as evenly as the count allows (two of each
 * for six bars), shuffled. An even mix keeps the chart's total ink nearly the same from chart to
 * chart, so what a tool removes or keeps is the signal, not the mix.
 */
function levelValues(rng: Rng, count: number, measure: ChartMeasure): number[] {
  const top = 10 ** Math.ceil(Math.log10(measure.max) - 1e-9);
  const even = Array.from({ length: count - (count % 3) }, (_, i) => i % 3);
  const levels = rng.shuffle([...even, ...rng.sample([0, 1, 2], count % 3)]);
  return levels.map((l) => {
    const [lo, hi] = LEVEL_BANDS[l] as readonly [number, number];
    return randomUnits(rng, lo * top, hi * top, measure.decimals);
  });
}

export interface ChartData {
  table: DataTable;
  pool: CategoryPool;
  measure: ChartMeasure;
}

export function makeChartData(rng: Rng, options: ChartDataOptions): ChartData {
  const usable = CATEGORY_POOLS.filter((p) => (p.id !== 'month' || options.categories <= 12));
  const time = usable.filter((p) => p.id === 'year' || p.id === 'month');
  const pool = options.pool ?? (rng.chance(options.timeAxis ?? 0) ? rng.pick(time) : rng.pick(usable));
  const labels = options.given ? [...options.given] : drawLabels(rng, pool.id as LabelPool, options.categories, options.labels);
  // Year series over a year axis would read as nonsense; every other pairing is fine.
  const sets = SERIES_SETS.filter((s) => s.length >= options.series && !(pool.id === 'year' && /^\d{4}$/.test(s[0] ?? '')));
  const seriesNames = options.series <= 1 ? [options.measure.axis] : rng.pick(sets).slice(0, options.series);
  const columns: DataColumn[] = [
    { kind: 'key', name: pool.axis },
    ...seriesNames.map((name): DataColumn => ({ kind: 'number', name, noun: options.measure.noun, decimals: options.measure.decimals, grouping: false })),
  ];
  // A per-chart range inside the measure's range, so charts differ in scale.
  const lo = options.measure.min + rng.next() * (options.measure.max - options.measure.min) * 0.3;
  const hi = lo + (options.measure.max - lo) * (0.4 + 0.6 * rng.next());
  const levelled = options.levels ? seriesNames.map(() => levelValues(rng, labels.length, options.measure)) : null;
  const rows = labels.map((label, r) => [label, ...seriesNames.map((_, s) => (levelled ? (levelled[s]?.[r] as number) : randomUnits(rng, lo, hi, options.measure.decimals)))]);
  return { table: { title: '', entity: { one: pool.one, many: pool.many }, columns, rows }, pool, measure: options.measure };
}
