/**
 * Picks a question about the data and writes it in English: the family (lookup, filter_sum,
 * count, argmax, argmin, compare, difference, average, list), its structured query, the text,
 * and the answer computed from the data by query-answer.ts — never typed in. When the image does
 * not print the values (charts without value labels), only questions whose answer is plain to
 * the eye are asked, with clear margins between the values involved.
 */
import type { CategoryPool } from './vocabulary.js';
import { formatUnits } from './answer-format.js';
import type { CategoryColumn, DataTable, NumberColumn } from './data-table.js';
import type { Rng } from './prng.js';
import { IllPosedQuestion } from './ill-posed.js';
import { answerQuery, matchingRows } from './query-answer.js';
import type { GeneratedKind, QueryCondition, QuestionFamily, TaskQuery } from './record.js';

export interface QuestionSetting {
  kind: GeneratedKind;
  data: DataTable;
  /** Charts: the measure's noun and the category pool, for wording. */
  chart?: { noun: string; pool: CategoryPool };
  /** Whether exact values can be read from the image (tables; charts with value labels). */
  exact: boolean;
  /** argmax / argmin: least lead of the extreme over the runner-up, as a fraction of the larger (`--min-top-gap`). */
  minTopGap?: number;
}

export interface AskedQuestion {
  question: string;
  answer: string | string[];
  family: QuestionFamily;
  query: TaskQuery;
}

/** Every family `--family` accepts. */
export const FAMILIES: readonly QuestionFamily[] = ['lookup', 'filter_sum', 'count', 'argmax', 'argmin', 'compare', 'difference', 'average', 'list', 'level'];
/**
 * The families asked when `--family` is absent: the ones the generator had before `level`, so a
 * data set made without the option regenerates byte for byte. `level` is asked only by name (its
 * data is drawn differently, see make-data.ts).
 */
export const DEFAULT_FAMILIES: readonly QuestionFamily[] = FAMILIES.filter((f) => f !== 'level');
const EYEBALL_FAMILIES: readonly QuestionFamily[] = ['argmax', 'argmin', 'compare', 'count', 'list', 'level'];
export const LEVELS = ['low', 'medium', 'high'] as const;

interface Num {
  index: number;
  column: NumberColumn;
}

function numberColumns(data: DataTable): Num[] {
  return data.columns.flatMap((column, index) => (column.kind === 'number' ? [{ index, column }] : []));
}

function categoryColumns(data: DataTable): { index: number; column: CategoryColumn }[] {
  return data.columns.flatMap((column, index) => (column.kind === 'category' ? [{ index, column }] : []));
}

function keys(data: DataTable): string[] {
  return data.rows.map((r) => String(r[0]));
}

function unitsOf(data: DataTable, row: number, col: number): number {
  return data.rows[row]?.[col] as number;
}

/** Smallest difference the eye can be trusted with on this chart (0 when values are printed). */
function eyeGap(setting: QuestionSetting, col: Num): number {
  if (setting.exact) return 0;
  const values = setting.data.rows.map((_, r) => unitsOf(setting.data, r, col.index));
  return Math.max(1, Math.round(Math.max(...values) * 0.1));
}

/** A threshold strictly between two of the column's values, at least `gap` from every value. */
function threshold(rng: Rng, data: DataTable, col: Num, gap: number): number | null {
  const values = [...new Set(data.rows.map((_, r) => unitsOf(data, r, col.index)))].sort((a, b) => a - b);
  const candidates: number[] = [];
  for (let i = 0; i + 1 < values.length; i++) {
    const lo = values[i] as number;
    const hi = values[i + 1] as number;
    if (hi - lo >= Math.max(2, 2 * gap)) candidates.push(Math.floor((lo + hi) / 2));
  }
  if (candidates.length === 0) return null;
  // Prefer round thresholds: snap to a multiple of a power of ten when that stays in the gap.
  const t = rng.pick(candidates);
  const lo = Math.max(...values.filter((v) => v < t));
  const hi = Math.min(...values.filter((v) => v > t));
  for (const step of [10 ** 4, 10 ** 3, 100, 50, 10, 5, 1]) {
    const snapped = Math.round(t / step) * step;
    if (snapped - lo >= Math.max(1, gap) && hi - snapped >= Math.max(1, gap)) return snapped;
  }
  return t;
}

function unitsToValue(units: number, decimals: number): number {
  return Number(formatUnits(units, decimals));
}

/** |a − b| ≥ gap × max(|a|, |b|): the extreme stands out from the runner-up by that fraction. */
export function leadsBy(a: number, b: number, gap: number): boolean {
  return a !== b && Math.abs(a - b) >= gap * Math.max(Math.abs(a), Math.abs(b));
}

// ---- wording -----------------------------------------------------------------------------

function isTime(setting: QuestionSetting): boolean {
  return setting.chart?.pool.id === 'year' || setting.chart?.pool.id === 'month';
}

function entity(setting: QuestionSetting): { one: string; many: string } {
  return setting.chart ? { one: setting.chart.pool.one, many: setting.chart.pool.many } : setting.data.entity;
}

/** How the quantity is named: the header for tables, the measure (and series) for charts. */
function quantity(setting: QuestionSetting, col: Num): string {
  return `${noun(setting, col)}${seriesSuffix(setting, col)}`;
}

function noun(setting: QuestionSetting, col: Num): string {
  return setting.chart ? setting.chart.noun : col.column.name;
}

/** " for Urban" when a chart has several series, else nothing. */
function seriesSuffix(setting: QuestionSetting, col: Num): string {
  return setting.chart && setting.data.columns.length > 2 ? ` for ${col.column.name}` : '';
}

function conditionText(setting: QuestionSetting, where: QueryCondition): string {
  if (where.op === 'eq') {
    const column = setting.data.columns.find((c) => c.name === where.column) as CategoryColumn;
    return column.filter.replace('{v}', String(where.value));
  }
  const col = numberColumns(setting.data).find((c) => c.column.name === where.column) as Num;
  const word = where.op === 'gt' ? (setting.chart ? 'above' : 'greater than') : setting.chart ? 'below' : 'less than';
  return `have ${quantity(setting, col)} ${word} ${where.value}`;
}

// ---- families ----------------------------------------------------------------------------

type Builder = (rng: Rng, setting: QuestionSetting) => { query: TaskQuery; question: string } | null;

function pickCondition(rng: Rng, setting: QuestionSetting, avoid?: Num): QueryCondition | null {
  const { data } = setting;
  const categories = categoryColumns(data);
  if (categories.length > 0 && rng.chance(0.6)) {
    const c = rng.pick(categories);
    const value = String(data.rows[rng.int(0, data.rows.length - 1)]?.[c.index]);
    return { column: c.column.name, op: 'eq', value };
  }
  const nums = numberColumns(data).filter((n) => n.index !== avoid?.index);
  if (nums.length === 0) return null;
  const col = rng.pick(nums);
  const t = threshold(rng, data, col, eyeGap(setting, col));
  if (t === null) return null;
  return { column: col.column.name, op: rng.chance(0.6) ? 'gt' : 'lt', value: unitsToValue(t, col.column.decimals) };
}

const lookup: Builder = (rng, setting) => {
  const { data } = setting;
  const row = rng.pick(keys(data));
  const cats = categoryColumns(data);
  if (!setting.chart && cats.length > 0 && rng.chance(0.25)) {
    const c = rng.pick(cats);
    return { query: { family: 'lookup', rows: [row], column: c.column.name }, question: rng.pick([`What is the ${c.column.name} of ${row}?`, `Which ${c.column.name} does ${row} have?`]) };
  }
  const col = rng.pick(numberColumns(data));
  const q = quantity(setting, col);
  const question = setting.chart
    ? isTime(setting) ? `What was the ${q} in ${row}?` : `What is the ${noun(setting, col)} of ${row}${seriesSuffix(setting, col)}?`
    : rng.pick([`What is the ${q} of ${row}?`, `What is ${row}'s ${q}?`]);
  return { query: { family: 'lookup', rows: [row], column: col.column.name }, question };
};

const filterSum: Builder = (rng, setting) => {
  const { data } = setting;
  const col = rng.pick(numberColumns(data));
  const q = quantity(setting, col);
  const e = entity(setting);
  if (setting.chart) {
    const rows = rng.sample(keys(data), Math.min(data.rows.length, rng.int(2, 3)));
    const named = rows.length === 2 ? `${rows[0]} and ${rows[1]}` : `${rows.slice(0, -1).join(', ')} and ${rows[rows.length - 1]}`;
    return { query: { family: 'filter_sum', column: col.column.name, rows }, question: `What is the total ${noun(setting, col)} of ${named}${seriesSuffix(setting, col)}?` };
  }
  const where = pickCondition(rng, setting, col);
  if (!where || matchingRows(data, where).length < 1) return null;
  return { query: { family: 'filter_sum', column: col.column.name, where }, question: `What is the total ${q} of the ${e.many} that ${conditionText(setting, where)}?` };
};

const count: Builder = (rng, setting) => {
  const where = pickCondition(rng, setting);
  if (!where) return null;
  return { query: { family: 'count', where }, question: `How many ${entity(setting).many} ${conditionText(setting, where)}?` };
};

function extreme(family: 'argmax' | 'argmin'): Builder {
  return (rng, setting) => {
    const { data } = setting;
    const word = family === 'argmax' ? 'highest' : 'lowest';
    const series = numberColumns(data);
    const e = entity(setting);
    if (setting.chart && series.length > 1 && rng.chance(0.35)) {
      const row = rng.pick(keys(data));
      const r = data.rows.findIndex((x) => x[0] === row);
      const values = series.map((s) => unitsOf(data, r, s.index)).sort((a, b) => (family === 'argmax' ? b - a : a - b));
      if (Math.abs((values[0] as number) - (values[1] as number)) < Math.max(1, eyeGap(setting, series[0] as Num))) return null;
      if (setting.minTopGap && !leadsBy(values[0] as number, values[1] as number, setting.minTopGap)) return null;
      const names = series.map((s) => s.column.name);
      const list = `${names.slice(0, -1).join(', ')} or ${names[names.length - 1]}`;
      const place = isTime(setting) ? `in ${row}` : `for ${row}`;
      return { query: { family, rows: [row], columns: names }, question: `Which has the ${word} ${setting.chart.noun} ${place}: ${list}?` };
    }
    const col = rng.pick(series);
    const where = !setting.chart && categoryColumns(data).length > 0 && rng.chance(0.3) ? pickCondition(rng, setting, col) : null;
    const rows = matchingRows(data, where ?? undefined);
    if (rows.length < 2) return null;
    const values = rows.map((r) => unitsOf(data, r, col.index)).sort((a, b) => (family === 'argmax' ? b - a : a - b));
    if (Math.abs((values[0] as number) - (values[1] as number)) < Math.max(1, eyeGap(setting, col))) return null;
    if (setting.minTopGap && !leadsBy(values[0] as number, values[1] as number, setting.minTopGap)) return null;
    const q = quantity(setting, col);
    const question = where
      ? `Among the ${e.many} that ${conditionText(setting, where)}, which ${e.one} has the ${word} ${q}?`
      : `Which ${e.one} has the ${word} ${q}?`;
    return { query: where ? { family, column: col.column.name, where } : { family, column: col.column.name }, question };
  };
}

function pair(family: 'compare' | 'difference'): Builder {
  return (rng, setting) => {
    const { data } = setting;
    const series = numberColumns(data);
    if (setting.chart && series.length > 1 && rng.chance(0.35)) {
      const row = rng.pick(keys(data));
      const r = data.rows.findIndex((x) => x[0] === row);
      const [s, t] = rng.sample(series, 2) as [Num, Num];
      const gap = Math.abs(unitsOf(data, r, s.index) - unitsOf(data, r, t.index));
      if (gap < Math.max(1, eyeGap(setting, s))) return null;
      const place = isTime(setting) ? `in ${row}` : `for ${row}`;
      const question = family === 'compare'
        ? `Which is higher ${place}, the ${setting.chart.noun} for ${s.column.name} or for ${t.column.name}?`
        : `What is the difference in ${setting.chart.noun} between ${s.column.name} and ${t.column.name} ${place}?`;
      return { query: { family, rows: [row], columns: [s.column.name, t.column.name] }, question };
    }
    const col = rng.pick(series);
    const [a, b] = rng.sample(keys(data), 2) as [string, string];
    const ra = data.rows.findIndex((x) => x[0] === a);
    const rb = data.rows.findIndex((x) => x[0] === b);
    if (Math.abs(unitsOf(data, ra, col.index) - unitsOf(data, rb, col.index)) < Math.max(1, eyeGap(setting, col))) return null;
    const q = quantity(setting, col);
    const e = entity(setting);
    const question = family === 'compare' ? `Which ${e.one} has a higher ${q}, ${a} or ${b}?` : `What is the difference in ${q} between ${a} and ${b}?`;
    return { query: { family, column: col.column.name, rows: [a, b] }, question };
  };
}

const average: Builder = (rng, setting) => {
  const { data } = setting;
  const col = rng.pick(numberColumns(data));
  const q = quantity(setting, col);
  const e = entity(setting);
  const where = !setting.chart && rng.chance(0.4) ? pickCondition(rng, setting, col) : null;
  if (where && matchingRows(data, where).length < 2) return null;
  const question = where ? `What is the average ${q} of the ${e.many} that ${conditionText(setting, where)}?` : `What is the average ${q} across all ${e.many}?`;
  return { query: where ? { family: 'average', column: col.column.name, where } : { family: 'average', column: col.column.name }, question };
};

const list: Builder = (rng, setting) => {
  const where = pickCondition(rng, setting);
  if (!where) return null;
  const n = matchingRows(setting.data, where).length;
  if (n < 1 || n > Math.max(3, Math.ceil(setting.data.rows.length / 2))) return null;
  return { query: { family: 'list', where }, question: `Which ${entity(setting).many} ${conditionText(setting, where)}?` };
};

/**
 * The level family's scale: the smallest power of ten at or above the column's largest value (in
 * displayed units), and the bounds at a quarter and three quarters of it. A power of ten is what
 * every tick set the layouts choose ends at when the largest bar is within 15% of it, so with
 * level data (make-data.ts) the value axis is drawn from 0 to exactly this scale.
 */
export function levelScale(data: DataTable, col: Num | { index: number; column: NumberColumn }): { top: number; bounds: [number, number] } {
  const largest = Math.max(...data.rows.map((_, r) => unitsOf(data, r, col.index))) / 10 ** col.column.decimals;
  const top = 10 ** Math.ceil(Math.log10(Math.max(largest, 10 ** -col.column.decimals)) - 1e-9);
  return { top, bounds: [Number((top / 4).toPrecision(6)), Number(((3 * top) / 4).toPrecision(6))] };
}

/** Which level a displayed value is in, or null when it is within `margin` of a bound (too close to judge by eye). */
export function levelOf(value: number, bounds: [number, number], margin: number): (typeof LEVELS)[number] | null {
  const [lo, hi] = bounds;
  if (Math.abs(value - lo) < margin || Math.abs(value - hi) < margin) return null;
  return value < lo ? 'low' : value > hi ? 'high' : 'medium';
}

/**
 * 'Is the revenue low (under 250), medium or high (over 750) for "D"?' The level is drawn first,
 * uniformly among the levels some item is clearly in, then an item of that level, so on level
 * data (every level present) each answer is equally likely and the chance level is one in three.
 */
const level: Builder = (rng, setting) => {
  const { data } = setting;
  if (!setting.chart) return null;
  const col = rng.pick(numberColumns(data));
  const { top, bounds } = levelScale(data, col);
  // Charts that do not print values are read by eye: a tenth of the scale away from either bound.
  const margin = setting.exact ? 0 : top / 10;
  const byLevel = new Map<string, string[]>();
  data.rows.forEach((row, r) => {
    const found = levelOf(unitsOf(data, r, col.index) / 10 ** col.column.decimals, bounds, margin || 1e-12);
    if (found) byLevel.set(found, [...(byLevel.get(found) ?? []), String(row[0])]);
  });
  const present = LEVELS.filter((l) => byLevel.has(l));
  if (present.length === 0) return null;
  const row = rng.pick(byLevel.get(rng.pick(present)) as string[]);
  const [lo, hi] = bounds;
  const range = `low (under ${lo}), medium or high (over ${hi})`;
  // The label is quoted as a call writes it (["D"]), so a tokenizer gives the question and the call the
  // same token for it (a bare word would be another token, " D"), and it comes last, so it sits at a
  // fixed distance before the call's argument: copying it is a lookup at a fixed offset. docs/DEMO.md
  // has what each of the two did to the micro model.
  const question = isTime(setting)
    ? `Was the ${quantity(setting, col)}${seriesSuffix(setting, col)} ${range} in "${row}"?`
    : `Is the ${noun(setting, col)}${seriesSuffix(setting, col)} ${range} for "${row}"?`;
  return { query: { family: 'level', rows: [row], column: col.column.name, bounds }, question };
};

const BUILDERS: Readonly<Record<QuestionFamily, Builder>> = {
  lookup,
  filter_sum: filterSum,
  count,
  argmax: extreme('argmax'),
  argmin: extreme('argmin'),
  compare: pair('compare'),
  difference: pair('difference'),
  average,
  list,
  level,
};

/** A well-posed question of a random allowed family; throws IllPosedQuestion if none fits. */
export function askQuestion(rng: Rng, setting: QuestionSetting, families: readonly QuestionFamily[] = DEFAULT_FAMILIES): AskedQuestion {
  const allowed = setting.exact ? families : families.filter((f) => EYEBALL_FAMILIES.includes(f));
  for (let round = 0; round < 6; round++) {
    for (const family of rng.shuffle(allowed)) {
      const built = BUILDERS[family](rng, setting);
      if (!built) continue;
      try {
        const answer = answerQuery(setting.data, built.query);
        return { question: built.question, answer, family, query: built.query };
      } catch (err) {
        if (!(err instanceof IllPosedQuestion)) throw err;
      }
    }
  }
  throw new IllPosedQuestion(`no well-posed question of the families ${allowed.join(', ')} fits this data`);
}
