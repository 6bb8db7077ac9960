/**
 * The checker's own answer to a task's structured question, recomputed from the record's stored
 * `table` (JSON numbers and strings) with exact decimal arithmetic on BigInt. It deliberately
 * shares no code with the generator's query-answer.ts: two independent paths that must agree.
 */
import type { QueryCondition, TaskQuery, TaskRecord } from './record.js';

interface Decimal {
  digits: bigint;
  scale: number;
}

function parseDecimal(value: string | number, where: string): Decimal {
  const text = typeof value === 'number' ? String(value) : value.replace(/,/g, '');
  const m = /^(-?)(\d+)(?:\.(\d+))?$/.exec(text.trim());
  if (!m) throw new Error(`${where}: '${value}' is not a plain decimal number`);
  const fraction = m[3] ?? '';
  return { digits: BigInt(`${m[1]}${m[2]}${fraction}`), scale: fraction.length };
}

function align(a: Decimal, scale: number): bigint {
  return a.digits * 10n ** BigInt(scale - a.scale);
}

function compare(a: Decimal, b: Decimal): number {
  const scale = Math.max(a.scale, b.scale);
  const x = align(a, scale);
  const y = align(b, scale);
  return x < y ? -1 : x > y ? 1 : 0;
}

function sum(values: Decimal[]): Decimal {
  const scale = Math.max(0, ...values.map((v) => v.scale));
  return { digits: values.reduce((s, v) => s + align(v, scale), 0n), scale };
}

function write(d: Decimal): string {
  const negative = d.digits < 0n;
  let text = (negative ? -d.digits : d.digits).toString().padStart(d.scale + 1, '0');
  if (d.scale > 0) text = `${text.slice(0, text.length - d.scale)}.${text.slice(text.length - d.scale)}`.replace(/0+$/, '').replace(/\.$/, '');
  return text === '0' ? '0' : `${negative ? '-' : ''}${text}`;
}

type Table = NonNullable<TaskRecord['table']>;

function column(table: Table, name: string | undefined): number {
  const i = name === undefined ? -1 : table.columns.indexOf(name);
  if (i < 0) throw new Error(`the query names column '${name}', which the table does not have (columns: ${table.columns.join(', ')})`);
  return i;
}

function row(table: Table, key: string | undefined): number {
  const i = table.rows.findIndex((r) => String(r[0]) === key);
  if (i < 0) throw new Error(`the query names row '${key}', which the table does not have`);
  return i;
}

function cell(table: Table, r: number, c: number): Decimal {
  return parseDecimal(table.rows[r]?.[c] as string | number, `table cell (${String(table.rows[r]?.[0])}, ${table.columns[c]})`);
}

function rowsWhere(table: Table, where: QueryCondition | undefined): number[] {
  const out: number[] = [];
  const c = where ? column(table, where.column) : -1;
  for (let r = 0; r < table.rows.length; r++) {
    if (!where) out.push(r);
    else if (where.op === 'eq' ? String(table.rows[r]?.[c]) === String(where.value) : compare(cell(table, r, c), parseDecimal(where.value, 'condition value')) === (where.op === 'gt' ? 1 : -1)) out.push(r);
  }
  return out;
}

function onlyBest(candidates: { name: string; value: Decimal }[], sign: 1 | -1): string {
  let best = candidates[0];
  if (!best || candidates.length < 2) throw new Error(`ill-posed: ranking ${candidates.length} candidate(s)`);
  for (const c of candidates) if (compare(c.value, best.value) * sign > 0) best = c;
  const ties = candidates.filter((c) => compare(c.value, (best as { value: Decimal }).value) === 0);
  if (ties.length > 1) throw new Error(`ill-posed: ${ties.map((t) => t.name).join(', ')} tie`);
  return best.name;
}

/** The answer to `query` over `table`, or an Error saying why it has none. */
export function recomputeAnswer(table: Table, query: TaskQuery): string | string[] {
  const key = (r: number) => String(table.rows[r]?.[0]);
  switch (query.family) {
    case 'above_below':
    case 'same_side':
    case 'inside_triangle':
    case 'segments_cross':
    case 'longer_segment':
    case 'locate':
      throw new Error(`a ${query.family} question is about a diagram's points, not a table (env/tasks/geometry)`);
    case 'text_on':
    case 'colour_of':
    case 'next_to':
    case 'how_many':
      throw new Error(`a ${query.family} question is about a search scene's objects, not a table (env/tasks/search)`);
    case 'lookup': {
      const value = table.rows[row(table, query.rows?.[0])]?.[column(table, query.column)];
      return typeof value === 'number' ? write(parseDecimal(value, 'lookup')) : String(value);
    }
    case 'filter_sum': {
      const c = column(table, query.column);
      const rows = query.rows ? query.rows.map((k) => row(table, k)) : rowsWhere(table, query.where);
      if (rows.length === 0) throw new Error('ill-posed: the sum has no terms');
      return write(sum(rows.map((r) => cell(table, r, c))));
    }
    case 'count':
      return String(rowsWhere(table, query.where).length);
    case 'argmax':
    case 'argmin': {
      const sign = query.family === 'argmax' ? 1 : -1;
      if (query.columns) {
        const r = row(table, query.rows?.[0]);
        return onlyBest(query.columns.map((name) => ({ name, value: cell(table, r, column(table, name)) })), sign);
      }
      const c = column(table, query.column);
      return onlyBest(rowsWhere(table, query.where).map((r) => ({ name: key(r), value: cell(table, r, c) })), sign);
    }
    case 'compare':
    case 'difference': {
      let pair: { name: string; value: Decimal }[];
      if (query.columns) {
        const r = row(table, query.rows?.[0]);
        pair = query.columns.map((name) => ({ name, value: cell(table, r, column(table, name)) }));
      } else {
        const c = column(table, query.column);
        pair = (query.rows ?? []).map((k) => ({ name: k, value: cell(table, row(table, k), c) }));
      }
      const [a, b] = pair;
      if (!a || !b || pair.length !== 2) throw new Error('a comparison needs exactly two items');
      if (query.family === 'compare') {
        const order = compare(a.value, b.value);
        if (order === 0) throw new Error(`ill-posed: ${a.name} and ${b.name} are equal`);
        return order > 0 ? a.name : b.name;
      }
      const scale = Math.max(a.value.scale, b.value.scale);
      const diff = align(a.value, scale) - align(b.value, scale);
      return write({ digits: diff < 0n ? -diff : diff, scale });
    }
    case 'average': {
      const c = column(table, query.column);
      const rows = rowsWhere(table, query.where);
      if (rows.length === 0) throw new Error('ill-posed: the average has no terms');
      const total = sum(rows.map((r) => cell(table, r, c)));
      // round(total / n, 2 places), half away from zero, in integers: q = ⌊(2|x|·100 + d) / 2d⌋.
      const numerator = (total.digits < 0n ? -total.digits : total.digits) * 100n;
      const denominator = 10n ** BigInt(total.scale) * BigInt(rows.length);
      const q = (2n * numerator + denominator) / (2n * denominator);
      return write({ digits: total.digits < 0n ? -q : q, scale: 2 });
    }
    case 'list': {
      const rows = rowsWhere(table, query.where);
      if (rows.length === 0) throw new Error('ill-posed: nothing is listed');
      return rows.map(key);
    }
    case 'level': {
      const value = cell(table, row(table, query.rows?.[0]), column(table, query.column));
      const [lo, hi] = (query.bounds ?? []).map((b) => parseDecimal(b, 'level bound'));
      if (!lo || !hi || compare(lo, hi) >= 0) throw new Error('ill-posed: a level needs two increasing bounds');
      const below = compare(value, lo);
      const above = compare(value, hi);
      if (below === 0 || above === 0) throw new Error('ill-posed: the value sits on a bound');
      return below < 0 ? 'low' : above > 0 ? 'high' : 'medium';
    }
  }
}
