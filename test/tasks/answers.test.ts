import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { recomputeAnswer } from '../../env/tasks/check-answer.js';
import { recordCell, type DataColumn, type DataTable } from '../../env/tasks/data-table.js';
import { IllPosedQuestion } from '../../env/tasks/ill-posed.js';
import { answerQuery } from '../../env/tasks/query-answer.js';
import type { QueryCondition, TaskQuery } from '../../env/tasks/record.js';
import { roundRatio } from '../../env/tasks/answer-format.js';

/** Random tables: a key column, 0–2 category columns, 1–3 number columns with 0–2 decimals. */
const tableArb = fc
  .record({
    rows: fc.integer({ min: 2, max: 10 }),
    categories: fc.integer({ min: 0, max: 2 }),
    numbers: fc.array(fc.record({ decimals: fc.integer({ min: 0, max: 2 }), max: fc.integer({ min: 1, max: 100000 }) }), { minLength: 1, maxLength: 3 }),
  })
  .chain(({ rows, categories, numbers }) =>
    fc.record({
      keys: fc.uniqueArray(fc.stringMatching(/^[A-Z][a-z]{1,6}$/), { minLength: rows, maxLength: rows }),
      cats: fc.array(fc.array(fc.constantFrom('Red', 'Blue', 'Green'), { minLength: rows, maxLength: rows }), { minLength: categories, maxLength: categories }),
      nums: fc.tuple(...numbers.map((n) => fc.array(fc.integer({ min: 0, max: n.max }), { minLength: rows, maxLength: rows }))),
      specs: fc.constant(numbers),
    }),
  )
  .map(({ keys, cats, nums, specs }): DataTable => {
    const columns: DataColumn[] = [
      { kind: 'key', name: 'Name' },
      ...cats.map((_, i): DataColumn => ({ kind: 'category', name: `Cat${i}`, filter: 'are {v}' })),
      ...specs.map((s, i): DataColumn => ({ kind: 'number', name: `Num${i}`, noun: `n${i}`, decimals: s.decimals, grouping: false })),
    ];
    const rows = keys.map((k, r) => [k, ...cats.map((c) => c[r] as string), ...nums.map((n) => n[r] as number)]);
    return { title: 't', entity: { one: 'item', many: 'items' }, columns, rows };
  });

function queryArb(table: DataTable): fc.Arbitrary<TaskQuery> {
  const keys = table.rows.map((r) => String(r[0]));
  const nums = table.columns.filter((c) => c.kind === 'number').map((c) => c.name);
  const cats = table.columns.filter((c) => c.kind === 'category').map((c) => c.name);
  const condition: fc.Arbitrary<QueryCondition> = cats.length > 0
    ? fc.oneof(
        fc.record({ column: fc.constantFrom(...cats), op: fc.constant('eq' as const), value: fc.constantFrom('Red', 'Blue', 'Green') }),
        fc.record({ column: fc.constantFrom(...nums), op: fc.constantFrom('gt' as const, 'lt' as const), value: fc.integer({ min: 0, max: 1000 }).map((v) => v / 10) }),
      )
    : fc.record({ column: fc.constantFrom(...nums), op: fc.constantFrom('gt' as const, 'lt' as const), value: fc.integer({ min: 0, max: 1000 }).map((v) => v / 10) });
  const col = fc.constantFrom(...nums);
  const two = fc.uniqueArray(fc.constantFrom(...keys), { minLength: 2, maxLength: 2 });
  const series = nums.length >= 2
    ? [
        fc.record({ family: fc.constantFrom('compare' as const, 'difference' as const), rows: fc.constantFrom(...keys).map((k) => [k]), columns: fc.uniqueArray(fc.constantFrom(...nums), { minLength: 2, maxLength: 2 }) }),
        fc.record({ family: fc.constantFrom('argmax' as const, 'argmin' as const), rows: fc.constantFrom(...keys).map((k) => [k]), columns: fc.constant(nums) }),
      ]
    : [];
  return fc.oneof(
    ...series,
    fc.record({ family: fc.constant('lookup' as const), rows: fc.constantFrom(...keys).map((k) => [k]), column: col }),
    fc.record({ family: fc.constant('filter_sum' as const), column: col, where: condition }),
    fc.record({ family: fc.constant('filter_sum' as const), column: col, rows: fc.uniqueArray(fc.constantFrom(...keys), { minLength: 1, maxLength: 3 }) }),
    fc.record({ family: fc.constant('count' as const), where: condition }),
    fc.record({ family: fc.constantFrom('argmax' as const, 'argmin' as const), column: col }),
    fc.record({ family: fc.constantFrom('argmax' as const, 'argmin' as const), column: col, where: condition }),
    fc.record({ family: fc.constantFrom('compare' as const, 'difference' as const), column: col, rows: two }),
    fc.record({ family: fc.constant('average' as const), column: col }),
    fc.record({ family: fc.constant('average' as const), column: col, where: condition }),
    fc.record({ family: fc.constant('list' as const), where: condition }),
    // Level bounds in displayed units, as fine as a tenth, possibly finer than the column.
    fc.record({ family: fc.constant('level' as const), rows: fc.constantFrom(...keys).map((k) => [k]), column: col,
      bounds: fc.tuple(fc.integer({ min: 0, max: 500 }), fc.integer({ min: 1, max: 500 })).map(([a, d]): [number, number] => [a / 10, (a + d) / 10]) }),
  );
}

/** A third, deliberately naive computation: plain floats over the record's cells. */
function naive(table: { columns: string[]; rows: (string | number)[][] }, q: TaskQuery): string | string[] | null {
  const c = (name: string | undefined) => table.columns.indexOf(name ?? '');
  const match = (w: QueryCondition | undefined) =>
    table.rows.filter((r) => !w || (w.op === 'eq' ? r[c(w.column)] === w.value : w.op === 'gt' ? (r[c(w.column)] as number) > (w.value as number) : (r[c(w.column)] as number) < (w.value as number)));
  const byKey = (k: string) => table.rows.find((r) => r[0] === k) as (string | number)[];
  const v = (r: (string | number)[]) => r[c(q.column)] as number;
  if (q.columns) {
    const row = byKey(q.rows![0]!);
    const vals = q.columns.map((name) => row[c(name)] as number);
    if (q.family === 'difference') return String(Math.abs(vals[0]! - vals[1]!));
    const best = q.family === 'argmin' ? Math.min(...vals) : Math.max(...vals);
    const at = q.columns.filter((_, i) => vals[i] === best);
    return at.length === 1 ? at[0]! : null;
  }
  switch (q.family) {
    case 'above_below': case 'same_side': case 'inside_triangle': case 'segments_cross': case 'longer_segment': case 'locate': return null; // diagrams: test/tasks/geometry-family.test.ts
    case 'text_on': case 'colour_of': case 'next_to': case 'how_many': return null; // search scenes: test/tasks/search.test.ts
    case 'lookup': return String(v(byKey(q.rows![0]!)));
    case 'filter_sum': { const rs = q.rows ? q.rows.map(byKey) : match(q.where); return rs.length ? String(rs.reduce((s, r) => s + v(r), 0)) : null; }
    case 'count': return String(match(q.where).length);
    case 'argmax': case 'argmin': {
      const rs = match(q.where);
      if (rs.length < 2) return null;
      const best = q.family === 'argmax' ? Math.max(...rs.map(v)) : Math.min(...rs.map(v));
      const at = rs.filter((r) => v(r) === best);
      return at.length === 1 ? String(at[0]![0]) : null;
    }
    case 'compare': { const [a, b] = q.rows!.map(byKey) as [(string | number)[], (string | number)[]]; return v(a) === v(b) ? null : String((v(a) > v(b) ? a : b)[0]); }
    case 'difference': { const [a, b] = q.rows!.map(byKey) as [(string | number)[], (string | number)[]]; return String(Math.abs(v(a) - v(b))); }
    case 'average': { const rs = match(q.where); return rs.length ? String(rs.reduce((s, r) => s + v(r), 0) / rs.length) : null; }
    case 'list': { const rs = match(q.where); return rs.length ? rs.map((r) => String(r[0])) : null; }
    case 'level': {
      const value = v(byKey(q.rows![0]!));
      const [lo, hi] = q.bounds!;
      if (Math.abs(value - lo) < 1e-9 || Math.abs(value - hi) < 1e-9) return null;
      return value < lo ? 'low' : value > hi ? 'high' : 'medium';
    }
  }
}

function recordTable(t: DataTable) {
  return { columns: t.columns.map((c) => c.name), rows: t.rows.map((row, r) => row.map((_, c) => recordCell(t, r, c))) };
}

test('generator answers, checker answers and a naive float computation agree on random tables and questions', () => {
  fc.assert(
    fc.property(tableArb.chain((t) => fc.tuple(fc.constant(t), queryArb(t))), ([table, query]) => {
      const stored = recordTable(table);
      let generated: string | string[] | null;
      try {
        generated = answerQuery(table, query);
      } catch (err) {
        if (!(err instanceof IllPosedQuestion)) throw err;
        generated = null;
      }
      let checked: string | string[] | null;
      try {
        checked = recomputeAnswer(stored, query);
      } catch {
        checked = null;
      }
      assert.deepEqual(checked, generated, `checker and generator disagree on ${JSON.stringify(query)}`);
      // The generator refuses a few things the naive path happily answers (e.g. an argmax over one row is fine for naive).
      const simple = naive(stored, query);
      if (generated === null) return;
      assert.notEqual(simple, null, `naive found no answer to ${JSON.stringify(query)}`);
      if (Array.isArray(generated)) assert.deepEqual(simple, generated);
      else if (/^-?\d+(\.\d+)?$/.test(generated) && query.family !== 'lookup' || query.family === 'lookup' && typeof simple === 'string' && /^-?\d/.test(simple)) {
        const tolerance = query.family === 'average' ? 0.005 + 1e-9 : 1e-9;
        assert.ok(Math.abs(Number(generated) - Number(simple)) <= tolerance, `${generated} vs naive ${String(simple)} for ${JSON.stringify(query)}`);
      } else assert.equal(generated, simple);
    }),
    { numRuns: 300, seed: 20240611 },
  );
});

test('averages round half away from zero to two decimals, computed on integers', () => {
  assert.equal(roundRatio(1, 8, 2), '0.13'); // 0.125 → 0.13
  assert.equal(roundRatio(-1, 8, 2), '-0.13');
  assert.equal(roundRatio(10, 4, 2), '2.5'); // trailing zero dropped
  assert.equal(roundRatio(7, 3, 2), '2.33');
  assert.equal(roundRatio(2, 1, 2), '2');
  // 1.005 as a float rounds down with toFixed; as integers it rounds up, as documented.
  assert.equal(roundRatio(1005, 1000, 2), '1.01');
});

test('a tie for the largest value makes an argmax question ill-posed instead of answering one of them', () => {
  const table: DataTable = {
    title: '', entity: { one: 'item', many: 'items' },
    columns: [{ kind: 'key', name: 'Name' }, { kind: 'number', name: 'Score', noun: 'score', decimals: 0, grouping: false }],
    rows: [['A', 5], ['B', 5], ['C', 1]],
  };
  assert.throws(() => answerQuery(table, { family: 'argmax', column: 'Score' }), IllPosedQuestion);
  assert.throws(() => recomputeAnswer(recordTable(table), { family: 'argmax', column: 'Score' }), /tie/);
  assert.equal(answerQuery(table, { family: 'argmin', column: 'Score' }), 'C');
});
