import { test } from 'node:test';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import { parseAction } from '../../env/actions/parse.js';
import { buildTask } from '../../env/tasks/generate.js';
import { goldTranscript, spacedJson } from '../../env/tasks/gold.js';
import { GENERATED_KINDS } from '../../env/tasks/generate.js';

test('gold turns are one hermes tool call per turn then an <answer>, and read back to the same calls and answer', () => {
  let lists = 0;
  for (const kind of GENERATED_KINDS) {
    for (let index = 0; index < 6; index++) {
      const { record } = buildTask({ seed: 2, split: 'train', index, attempt: 0, kind, difficulty: 2, imageSize: null });
      const { toolTurns, answer } = goldTranscript(record);
      assert.ok((record.gold ?? []).length > 0, `${record.id} has gold calls`);
      assert.equal(toolTurns.length, record.gold!.length, 'one turn per call');
      toolTurns.forEach((turn, i) => {
        assert.match(turn, /^<tool_call>\{"name": "focus_on_[a-z_]+", "arguments": \{/);
        const parsed = parseAction(turn);
        assert.deepEqual(parsed.calls, [record.gold![i]]);
        assert.deepEqual(parsed.errors, []);
      });
      const final = parseAction(answer);
      // A one-item list is written as that item: `<answer>2007</answer>`.
      const expected = Array.isArray(record.answer) && record.answer.length === 1 ? record.answer[0] : record.answer;
      assert.deepEqual(final.answer, expected);
      if (Array.isArray(record.answer)) lists++;
    }
  }
  assert.ok(lists > 0, 'some tasks have list answers');
});

const python = join(__dirname, '..', '..', '.venv', 'bin', 'python');

test("a gold call's JSON is byte for byte what Python's json.dumps writes (the trainer's warm-up text)", { skip: existsSync(python) ? false : 'no .venv (make venv): Python is the reference here' }, () => {
  const calls = GENERATED_KINDS.flatMap((kind) => Array.from({ length: 4 }, (_, index) =>
    buildTask({ seed: 5, split: 'train', index, attempt: 0, kind, difficulty: 3, imageSize: null }).record.gold ?? []).flat());
  calls.push({ name: 'focus_on_rows_with_draw', arguments: { rows: ['Zürich', 'São Paulo', 'a "quoted" \\ label'] } });
  const script = 'import json, sys\nfor call in json.load(sys.stdin):\n    print(json.dumps({"name": call["name"], "arguments": call["arguments"]}, ensure_ascii=False))';
  const result = spawnSync(python, ['-c', script], { input: JSON.stringify(calls), encoding: 'utf8' });
  assert.equal(result.status, 0, result.stderr);
  const expected = result.stdout.trimEnd().split('\n');
  assert.equal(expected.length, calls.length);
  assert.deepEqual(calls.map((c) => spacedJson({ name: c.name, arguments: c.arguments })), expected);
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
