/**
 * The generator's answer to a structured question, computed on the data's integer units. It
 * refuses ill-posed questions (a tie for the largest value, two equal values to compare, a list
 * with no members) by throwing IllPosedQuestion (ill-posed.ts), so the question picker can choose another.
 * The checker recomputes every answer with its own code (check-answer.ts), from the stored
 * record, without sharing anything with this module.
 */
import { formatUnits, roundRatio } from './answer-format.js';
import { columnIndex, type DataTable, type NumberColumn } from './data-table.js';
import { IllPosedQuestion } from './ill-posed.js';
import type { QueryCondition, TaskQuery } from './record.js';

function numberColumn(data: DataTable, name: string | undefined): { index: number; column: NumberColumn } {
  if (name === undefined) throw new IllPosedQuestion('the question names no column');
  const index = columnIndex(data, name);
  const column = data.columns[index];
  if (column?.kind !== 'number') throw new IllPosedQuestion(`column '${name}' is not numeric`);
  return { index, column };
}

function rowIndex(data: DataTable, key: string): number {
  const index = data.rows.findIndex((r) => r[0] === key);
  if (index < 0) throw new IllPosedQuestion(`no row '${key}'`);
  return index;
}

function units(data: DataTable, row: number, col: number): number {
  const cell = data.rows[row]?.[col];
  if (typeof cell !== 'number') throw new IllPosedQuestion(`cell (${row}, ${col}) is not a number`);
  return cell;
}

/** Threshold values are real numbers: compare at whichever is finer, the column's or the threshold's decimals. */
function thresholdScale(value: number, decimals: number): { scale: number; threshold: number } {
  const own = (String(value).split('.')[1] ?? '').length;
  const scale = Math.max(decimals, own);
  return { scale: 10 ** (scale - decimals), threshold: Math.round(value * 10 ** scale) };
}

export function matchingRows(data: DataTable, where: QueryCondition | undefined): number[] {
  const all = data.rows.map((_, i) => i);
  if (!where) return all;
  const col = columnIndex(data, where.column);
  const column = data.columns[col];
  if (where.op === 'eq') return all.filter((r) => String(data.rows[r]?.[col]) === String(where.value));
  if (column?.kind !== 'number' || typeof where.value !== 'number') throw new IllPosedQuestion(`condition ${where.op} needs a number column and a number`);
  const { scale, threshold } = thresholdScale(where.value, column.decimals);
  return all.filter((r) => (where.op === 'gt' ? units(data, r, col) * scale > threshold : units(data, r, col) * scale < threshold));
}

/** The index of the unique extreme of `values`, or an IllPosedQuestion on a tie. */
function uniqueExtreme(values: number[], largest: boolean): number {
  const best = largest ? Math.max(...values) : Math.min(...values);
  const at = values.flatMap((v, i) => (v === best ? [i] : []));
  if (at.length !== 1) throw new IllPosedQuestion(`${at.length} items share the ${largest ? 'largest' : 'smallest'} value`);
  return at[0] as number;
}

export function answerQuery(data: DataTable, query: TaskQuery): string | string[] {
  const key = (r: number) => String(data.rows[r]?.[0]);
  switch (query.family) {
    case 'above_below':
    case 'same_side':
    case 'inside_triangle':
    case 'segments_cross':
    case 'longer_segment':
    case 'locate':
      throw new IllPosedQuestion(`a ${query.family} question is about a diagram's points, not a table (env/tasks/geometry)`);
    case 'text_on':
    case 'colour_of':
    case 'next_to':
    case 'how_many':
      throw new IllPosedQuestion(`a ${query.family} question is about a search scene's objects, not a table (env/tasks/search)`);
    case 'lookup': {
      const r = rowIndex(data, query.rows?.[0] ?? '');
      const c = columnIndex(data, query.column ?? '');
      const column = data.columns[c];
      return column?.kind === 'number' ? formatUnits(units(data, r, c), column.decimals) : String(data.rows[r]?.[c]);
    }
    case 'filter_sum': {
      const { index, column } = numberColumn(data, query.column);
      const rows = query.rows ? query.rows.map((k) => rowIndex(data, k)) : matchingRows(data, query.where);
      if (rows.length === 0) throw new IllPosedQuestion('the sum is over no rows');
      return formatUnits(rows.reduce((s, r) => s + units(data, r, index), 0), column.decimals);
    }
    case 'count':
      return String(matchingRows(data, query.where).length);
    case 'argmax':
    case 'argmin': {
      const largest = query.family === 'argmax';
      if (query.columns) {
        const r = rowIndex(data, query.rows?.[0] ?? '');
        const cols = query.columns.map((name) => numberColumn(data, name));
        const scale = Math.max(...cols.map((c) => c.column.decimals));
        return cols[uniqueExtreme(cols.map((c) => units(data, r, c.index) * 10 ** (scale - c.column.decimals)), largest)]?.column.name as string;
      }
      const { index } = numberColumn(data, query.column);
      const rows = matchingRows(data, query.where);
      if (rows.length < 2) throw new IllPosedQuestion('an extreme needs at least two candidates');
      return key(rows[uniqueExtreme(rows.map((r) => units(data, r, index)), largest)] as number);
    }
    case 'compare':
    case 'difference': {
      let a: number, b: number, names: [string, string], decimals: number;
      if (query.columns) {
        const r = rowIndex(data, query.rows?.[0] ?? '');
        const [s, t] = query.columns.map((name) => numberColumn(data, name));
        if (!s || !t) throw new IllPosedQuestion('compare needs two columns');
        // Columns may differ in decimals: compare in the finer unit.
        decimals = Math.max(s.column.decimals, t.column.decimals);
        a = units(data, r, s.index) * 10 ** (decimals - s.column.decimals);
        b = units(data, r, t.index) * 10 ** (decimals - t.column.decimals);
        names = [s.column.name, t.column.name];
      } else {
        const { index, column } = numberColumn(data, query.column);
        const [ka, kb] = query.rows ?? [];
        if (ka === undefined || kb === undefined || ka === kb) throw new IllPosedQuestion('compare needs two different rows');
        a = units(data, rowIndex(data, ka), index);
        b = units(data, rowIndex(data, kb), index);
        names = [ka, kb];
        decimals = column.decimals;
      }
      if (query.family === 'difference') return formatUnits(Math.abs(a - b), decimals);
      if (a === b) throw new IllPosedQuestion('the two values are equal');
      return a > b ? names[0] : names[1];
    }
    case 'average': {
      const { index, column } = numberColumn(data, query.column);
      const rows = matchingRows(data, query.where);
      if (rows.length === 0) throw new IllPosedQuestion('the average is over no rows');
      const sum = rows.reduce((s, r) => s + units(data, r, index), 0);
      return roundRatio(sum, rows.length * 10 ** column.decimals, 2);
    }
    case 'list': {
      const rows = matchingRows(data, query.where);
      if (rows.length === 0) throw new IllPosedQuestion('no row matches the list condition');
      return rows.map(key);
    }
    case 'level': {
      const { index, column } = numberColumn(data, query.column);
      const bounds = query.bounds ?? [];
      if (bounds.length !== 2) throw new IllPosedQuestion('a level question needs two bounds');
      // Bounds may be finer than the column (2.5 on an integer axis): compare at the finer scale.
      const finest = Math.max(column.decimals, ...bounds.map((b) => (String(b).split('.')[1] ?? '').length));
      const value = units(data, rowIndex(data, query.rows?.[0] ?? ''), index) * 10 ** (finest - column.decimals);
      const [lo, hi] = bounds.map((b) => Math.round(b * 10 ** finest)) as [number, number];
      if (!(lo < hi)) throw new IllPosedQuestion('a level question needs two increasing bounds');
      if (value === lo || value === hi) throw new IllPosedQuestion('the value sits on a bound');
      return value < lo ? 'low' : value > hi ? 'high' : 'medium';
    }
  }
}
