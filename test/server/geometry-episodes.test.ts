/* eslint-disable @typescript-eslint/no-explicit-any -- the server's JSON answers are read loosely here; their shapes are what the assertions check */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EnvServer } from '../../env/server/server.js';
import { createScorer } from '../../env/server/scorer.js';
import { decodeImage } from '../../env/core/image.js';
import { buildTask, renderTask, type TaskSpec } from '../../env/tasks/generate.js';
import type { TaskRecord } from '../../env/tasks/record.js';

let root: string;
let server: EnvServer;
let url: string;
const token = 'test-token-geometry-0123';
const tasks: Record<string, TaskRecord> = {};

async function writeTask(family: string, index: number): Promise<TaskRecord> {
  const spec: TaskSpec = { seed: 3, split: 'test', index, attempt: 0, kind: 'geometry', difficulty: 2, imageSize: null, families: [family] as never };
  for (let attempt = 0; ; attempt++) {
    try {
      const rendered = await renderTask(buildTask({ ...spec, attempt }));
      await writeFile(join(root, rendered.record.image), rendered.png);
      return rendered.record;
    } catch (err) {
      if (attempt > 6 || !['LayoutError', 'IllPosedQuestion'].includes((err as Error).name)) throw err;
    }
  }
}

before(async () => {
  root = await mkdtemp(join(tmpdir(), 'vistool-geometry-server-'));
  await mkdir(join(root, 'images'));
  tasks.above = await writeTask('above_below', 1);
  tasks.locate = await writeTask('locate', 2);
  server = new EnvServer({ token, root, imagesDir: join(root, 'run', 'images'), scorer: createScorer(undefined), log: () => {}, idleTimeoutMs: 60_000 });
  url = await server.start();
});

after(async () => {
  await server.stop();
});

async function call(method: string, path: string, body?: unknown): Promise<Record<string, any>> {
  const res = await fetch(url + path, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  const json = (await res.json()) as Record<string, any>;
  assert.equal(res.status, 200, JSON.stringify(json));
  return json;
}

test('reset names the domain: the task kind, the diagram tools by name, and a system prompt that lists only those', async () => {
  const started = await call('POST', '/v1/episodes', { task: tasks.above });
  assert.equal(started.kind, 'geometry');
  assert.deepEqual(started.tool_names, ['draw_line', 'draw_segment', 'draw_circle', 'mark_point', 'zoom_in']);
  assert.deepEqual(started.tools.map((t: any) => t.function.name), started.tool_names);
  const system = started.observation.messages[0].content[0].text as string;
  const listed = [...system.matchAll(/^### (\S+)$/gm)].map((m) => m[1]);
  assert.deepEqual(listed, started.tool_names);
  assert.doesNotMatch(system, /focus_on_/);
  assert.match(system, /^You answer questions about a geometry diagram\. You can draw on the image with tools before answering:/);
  assert.match(system, /Use point labels exactly as they appear in the image\./);
  // The example call is on this diagram's own points.
  const [first, second] = Object.keys(tasks.above!.meta.points as object);
  assert.match(system, new RegExp(`<tool_call>\\{"name": "draw_line", "arguments": \\{"through": \\["${first}", "${second}"\\]\\}\\}</tool_call>`));
  const textArm = await call('POST', '/v1/episodes', { task: tasks.above, options: { tools: false } });
  assert.equal(textArm.kind, 'geometry');
  assert.deepEqual(textArm.tool_names, []);
  await call('DELETE', `/v1/episodes/${started.episode_id}`);
  await call('DELETE', `/v1/episodes/${textArm.episode_id}`);
});

test('parse → tool → score: a model message drawing the line through the named points, then the answer, earns the tool reward', async () => {
  const task = tasks.above!;
  const [a, b] = task.query!.points as string[];
  const started = await call('POST', '/v1/episodes', { task });
  const id = started.episode_id;
  const stepped = await call('POST', `/v1/episodes/${id}/step`, { text: `<think>Draw it.</think><tool_call>{"name": "draw_line", "arguments": {"through": ["${a}", "${b}"]}}</tool_call>` });
  assert.equal(stepped.done, false);
  const [reply] = stepped.observation.messages;
  assert.equal(reply.role, 'tool');
  assert.equal(reply.content[0].text, `OBSERVATION: drew a red line through ${a} and ${b}. The edited image follows.`);
  const edited = await decodeImage(reply.content[1].path);
  let red = 0;
  for (let i = 0; i < edited.data.length; i += 3) if (edited.data[i] === 255 && edited.data[i + 1] === 0 && edited.data[i + 2] === 0) red++;
  assert.ok(red >= 2 * edited.width * 0.9, `the line crosses the image (${red} red pixels)`);
  const answered = await call('POST', `/v1/episodes/${id}/step`, { text: `<answer>${task.answer}</answer>` });
  assert.equal(answered.done, true);
  const score = await call('POST', `/v1/episodes/${id}/score`, {});
  assert.equal(score.correct, true);
  assert.equal(score.reward, 1.2);
});

test('an unknown point label comes back as an E4 observation that lists the points', async () => {
  const started = await call('POST', '/v1/episodes', { task: tasks.above });
  const stepped = await call('POST', `/v1/episodes/${started.episode_id}/step`, { text: '<tool_call>{"name": "draw_segment", "arguments": {"endpoints": ["A1", "Q9"]}}</tool_call>' });
  const text = stepped.observation.messages[0].content.map((p: any) => p.text ?? '').join('\n');
  assert.match(text, /ERROR \[E4\]: endpoints\[0\]: unknown point 'A1' — points are: /);
  assert.deepEqual(stepped.info.errors.map((e: any) => e.class), ['E4']);
});

test('a located point is scored by its distance: within tolerance correct, further partial, the distance in the breakdown', async () => {
  const task = tasks.locate!;
  const [x, y] = (task.answer as string).match(/\d+/g)!.map(Number) as [number, number];
  const tolerance = task.query!.tolerance_px!;
  const score = async (text: string) => {
    const started = await call('POST', '/v1/episodes', { task, options: { tools: false } });
    await call('POST', `/v1/episodes/${started.episode_id}/step`, { text });
    return call('POST', `/v1/episodes/${started.episode_id}/score`, {});
  };
  const near = await score(`<answer>(${x + 3}, ${y - 4})</answer>`);
  assert.equal(near.correct, true);
  assert.equal(near.components.point_distance_px, 5);
  assert.equal(near.components.accuracy, 1);
  const far = await score(`<answer>(${x + 2 * tolerance}, ${y})</answer>`);
  assert.equal(far.correct, false);
  assert.equal(far.components.accuracy, 0.5);
});
