import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateDataset } from '../../env/tasks/dataset.js';
import { loadTasks } from '../../env/tasks/load.js';
import { PlaygroundSessions } from '../../env/view/playground-sessions.js';

test('a generated diagram opens in the playground with its points from the task record, the diagram tools, and label calls that draw', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'vistool-playground-geometry-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  await generateDataset(join(dir, 'tasks'), { kind: 'geometry', n: 2, seed: 5, split: 'test', difficulty: [2, 2], imageSize: null, concurrency: 1, families: ['same_side'] as never });
  const [task] = await loadTasks(join(dir, 'tasks', 'tasks.jsonl'));
  const sessions = new PlaygroundSessions([dir]);
  const opened = await sessions.open({ session: 's', image: { path: join(dir, 'tasks', task!.image) } } as never);
  assert.match(opened.metadataSource ?? '', /^task test-geometry-000000 in tasks/);
  assert.deepEqual(opened.availableTools, ['draw_line', 'draw_segment', 'draw_circle', 'mark_point', 'zoom_in']);
  assert.deepEqual(opened.labels.points, Object.keys(task!.meta.points as object));
  const [a, b] = task!.query!.points as [string, string];
  const drawn = await sessions.apply('s', { name: 'draw_line', arguments: { through: [a, b] } });
  assert.equal(drawn.error, null);
  assert.deepEqual(drawn.calls.map((c) => c.summary), [`drew a red line through ${a} and ${b}.`]);
  const wrong = await sessions.apply('s', { name: 'mark_point', arguments: { point: 'nope' } });
  assert.equal(wrong.error?.class, 'E4');
  assert.match(wrong.error?.message ?? '', /unknown point 'nope'/);
});
