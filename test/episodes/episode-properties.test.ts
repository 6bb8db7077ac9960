/**
 * Whatever a model writes, an episode stays a readable record: every step returns, the trajectory
 * survives structuredClone and a JSON round trip unchanged, and scoring gives a finite reward.
 * (A prototype name once turned into a JavaScript function here and made the record unclonable.)
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { Episode } from '../../env/episodes/episode.js';
import { ImageStore } from '../../env/episodes/image-store.js';
import { scoreTrajectory } from '../../env/rewards/score.js';
import { resolveMetadata } from '../../env/tools/metadata.js';
import type { TaskRecord } from '../../env/tasks/record.js';
import { tableFixture } from '../fixtures/render.js';

const PIECES = [
  '<tool_call>', '</tool_call>', '{"name": "focus_on_columns_with_mask", "arguments": {"columns": ["Rider"]}}', '<answer>', '</answer>',
  '```python\n', '\n```', 'x = zoom_in(image_1, ', 'toString', 'valueOf', 'constructor', '__proto__', 'hasOwnProperty', ')',
  'focus_on_columns_with_mask(image_1, [', '"Wins"', ']', ', columns_bbox)', 'Terminate(ans=', '{"actions": [', '{"name": "zoom_in", "arguments": {"bbox": [0, 0, 9, 9]}}',
  'FINAL ANSWER: ', '34', '\\boxed{', '}', '\n', ' ', '"', "'", 'None', 'True', 'image_1', '[1, 2, 3, 4]', '1e309', '-0', 'NaN',
];

const PROTOTYPE_NAMES = ['toString', 'valueOf', 'constructor', '__proto__', 'hasOwnProperty', 'isPrototypeOf'];

/** ReFocus-style code whose arguments are prototype names: the shape that once broke episodes. */
const prototypeCall = fc
  .tuple(fc.constantFrom(...PROTOTYPE_NAMES), fc.constantFrom(...PROTOTYPE_NAMES), fc.constantFrom('zoom_in', 'focus_on_columns_with_mask', 'focus_on_rows_with_draw'))
  .map(([a, b, tool]) => '```python\nx = ' + tool + '(image_1, ' + a + ', ' + b + ')\ndisplay(x)\n```');

const message = fc.oneof(
  fc.array(fc.constantFrom(...PIECES), { maxLength: 24 }).map((parts) => parts.join('')),
  fc.string({ unit: 'binary', maxLength: 200 }),
  prototypeCall,
);

test('any sequence of model messages yields a serialisable trajectory and a finite score', async () => {
  const fixture = await tableFixture();
  const task: TaskRecord = {
    id: 'fixture-table', image: 'table.png', question: 'How many wins does Merckx have?', answer: '34', kind: 'table', difficulty: 1, meta: fixture.meta, source: 'test',
  };
  const store = new ImageStore(await mkdtemp(join(tmpdir(), 'vistool-episode-props-')));
  const meta = resolveMetadata(fixture.meta, fixture.image.width, fixture.image.height);
  await fc.assert(
    fc.asyncProperty(fc.array(message, { minLength: 1, maxLength: 4 }), async (messages) => {
      const { episode } = await Episode.start(task, fixture.image, meta, store, { limits: { maxTurns: 4 } });
      for (const text of messages) {
        if (episode.trajectory().end_reason !== null) break;
        const result = await episode.step({ text });
        assert.doesNotThrow(() => structuredClone(result), text);
      }
      const trajectory = episode.trajectory();
      assert.deepEqual(structuredClone(trajectory), trajectory);
      assert.deepEqual(JSON.parse(JSON.stringify(trajectory)), trajectory);
      const scored = scoreTrajectory(trajectory, task.answer);
      assert.ok(Number.isFinite(scored.reward), String(scored.reward));
      for (const value of Object.values(scored.components)) assert.ok(Number.isFinite(value));
    }),
    { numRuns: 150 },
  );
});
