import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseAction } from '../../env/actions/parse.js';
import { buildTask } from '../../env/tasks/generate.js';
import { goldMessages } from '../../env/tasks/gold.js';
import { GENERATED_KINDS } from '../../env/tasks/generate.js';

test('gold messages are hermes tool calls then an <answer>, and read back to the same calls and answer', () => {
  let lists = 0;
  for (const kind of GENERATED_KINDS) {
    for (let index = 0; index < 6; index++) {
      const { record } = buildTask({ seed: 2, split: 'train', index, attempt: 0, kind, difficulty: 2, imageSize: null });
      const messages = goldMessages(record);
      assert.ok((record.gold ?? []).length > 0, `${record.id} has gold calls`);
      assert.equal(messages.length, 2);
      assert.match(messages[0]!, /^<tool_call>\n\{"name":"focus_on_/);
      const calls = parseAction(messages[0]!);
      assert.deepEqual(calls.calls, record.gold);
      assert.deepEqual(calls.errors, []);
      const final = parseAction(messages[1]!);
      // A one-item list is written as that item: `<answer>2007</answer>`.
      const expected = Array.isArray(record.answer) && record.answer.length === 1 ? record.answer[0] : record.answer;
      assert.deepEqual(final.answer, expected);
      if (Array.isArray(record.answer)) lists++;
    }
  }
  assert.ok(lists > 0, 'some tasks have list answers');
});

test('table gold masks to the asked columns, then boxes named rows or highlights matching ones', () => {
  const seen = new Set<string>();
  for (let index = 0; index < 30; index++) {
    const { record } = buildTask({ seed: 4, split: 'train', index, attempt: 0, kind: 'table', difficulty: 3, imageSize: null });
    const [first, second] = record.gold ?? [];
    const query = record.query!;
    if (first?.name === 'focus_on_columns_with_mask') {
      const kept = first.arguments.columns as string[];
      assert.equal(kept[0], record.table!.columns[0], 'the key column stays');
      if (query.column) assert.ok(kept.includes(query.column));
      if (query.where) assert.ok(kept.includes(query.where.column));
    }
    if (second) {
      seen.add(second.name);
      if (query.rows && second.name === 'focus_on_rows_with_draw') assert.deepEqual(second.arguments.rows, query.rows);
    }
  }
  assert.ok(seen.has('focus_on_rows_with_draw') && seen.has('focus_on_rows_with_highlight'), [...seen].join(', '));
});
