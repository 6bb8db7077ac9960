/* eslint-disable @typescript-eslint/no-explicit-any -- the server's JSON answers are read loosely here; their shapes are what the assertions check */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { EnvServer } from '../../env/server/server.js';
import { createScorer } from '../../env/server/scorer.js';
import { generateDataset } from '../../env/tasks/dataset.js';
import { loadTasks } from '../../env/tasks/load.js';
import type { TaskRecord } from '../../env/tasks/record.js';
import type { PointXY } from '../../env/tools/metadata.js';
import { ensureBundles, launchBrowser, openPage, screenshot, startView, type ViewSession } from './browser-harness.js';

let browser: Browser;
let view: ViewSession;
let task: TaskRecord;

/**
 * A run directory as the trainer leaves one, made by the REAL env server: a generated diagram in
 * data/train, two episodes played through HTTP (one draws the line through the named points and
 * answers, one answers directly), their trajectories and scores as rollout records of step 1.
 */
before(async () => {
  const root = await mkdtemp(join(tmpdir(), 'vistool-geometry-viewer-'));
  const run = join(root, 'geometry-run');
  await mkdir(join(run, 'rollouts'), { recursive: true });
  await generateDataset(join(run, 'data', 'train'), { kind: 'geometry', n: 1, seed: 2, split: 'train', difficulty: [2, 2], imageSize: null, concurrency: 1, families: ['above_below'] as never });
  [task] = (await loadTasks(join(run, 'data', 'train', 'tasks.jsonl'))) as [TaskRecord];
  await writeFile(join(run, 'config.json'), JSON.stringify({ name: 'geometry-run', rl: { group_size: 2 } }));
  await writeFile(join(run, 'run.json'), JSON.stringify({ status: 'finished', name: 'geometry-run', started_at: 1_700_000_000 }));
  await writeFile(join(run, 'metrics.jsonl'), '');
  const server = new EnvServer({ token: 'token-geometry-viewer', root: join(run, 'data', 'train'), imagesDir: join(run, 'images'), scorer: createScorer(undefined), log: () => {} });
  const url = await server.start();
  const post = async (path: string, body: unknown) => (await fetch(url + path, { method: 'POST', headers: { authorization: 'Bearer token-geometry-viewer' }, body: JSON.stringify(body) })).json() as Promise<Record<string, any>>;
  const get = async (path: string) => (await fetch(url + path, { headers: { authorization: 'Bearer token-geometry-viewer' } })).json() as Promise<Record<string, any>>;
  const [a, b] = task.query!.points as [string, string];
  const wrong = task.answer === 'above' ? 'below' : 'above';
  const lines: string[] = [];
  for (const [group, turns] of [[`<tool_call>{"name": "draw_line", "arguments": {"through": ["${a}", "${b}"]}}</tool_call>`, `<answer>${task.answer}</answer>`], [`<answer>${wrong}</answer>`]].entries()) {
    const started = await post('/v1/episodes', { task, task_dir: join(run, 'data', 'train') });
    for (const text of turns) await post(`/v1/episodes/${started.episode_id}/step`, { text });
    const score = await post(`/v1/episodes/${started.episode_id}/score`, {});
    const trajectory = await get(`/v1/episodes/${started.episode_id}`);
    lines.push(JSON.stringify({ ...trajectory, step: 1, group, reward: score.reward, reward_breakdown: score.components, reward_weights: score.weights, correct: score.correct, advantage: group === 0 ? 1 : -1, kept: true }));
  }
  await server.stop();
  await writeFile(join(run, 'rollouts', 'step-000001.jsonl'), lines.join('\n') + '\n');
  await ensureBundles();
  browser = await launchBrowser();
  view = await startView([run]);
});

after(async () => {
  await browser?.close();
  await view?.stop();
});

test('a geometry episode shows in the viewer like a chart episode: the question, the call, the diagram before and after, and the drawn line as the difference', async () => {
  const { page, problems } = await openPage(browser, view.url('viewer'));
  await page.locator('[data-testid=rollout]').first().waitFor();
  const group = page.locator('[data-testid=group]').first();
  assert.match(await group.innerText(), new RegExp(`${task.question.replace(/[?.]/g, '\\$&')}[\\s\\S]*gold ${task.answer}[\\s\\S]*1/2 correct`));
  const [a, b] = task.query!.points as [string, string];
  const detail = page.locator('[data-testid=rollout-detail]');
  assert.match(await detail.innerText(), new RegExp(`draw_line[\\s\\S]*drew a red line through ${a} and ${b}\\.`));
  const compare = page.locator('[data-testid=turn][data-turn="0"] [data-testid=image-compare]').first();
  const images = compare.locator('img');
  assert.deepEqual(await images.evaluateAll((imgs) => imgs.map((i) => i.getAttribute('data-role'))), ['before', 'after']);
  await page.waitForFunction(() => Array.from(document.querySelectorAll('[data-turn="0"] [data-testid=image-compare] img')).every((i) => (i as HTMLImageElement).naturalWidth > 0));
  assert.deepEqual(await images.evaluateAll((imgs) => imgs.map((i) => (i as HTMLImageElement).naturalWidth)), [400, 400]);
  await compare.locator('[data-testid=diff-toggle]').click();
  await compare.locator('[data-testid=diff-summary]').waitFor();
  // The difference is the line: every pixel whose centre is under 1 px from the line through the
  // two points (env/tools/README.md), worked out here in floating point.
  const points = task.meta.points as Record<string, PointXY>;
  const p = points[a] as PointXY, q = points[b] as PointXY;
  let expected = 0;
  for (let y = 0; y < 300; y++) {
    for (let x = 0; x < 400; x++) {
      if (Math.abs((q.x - p.x) * (y - p.y) - (q.y - p.y) * (x - p.x)) / Math.hypot(q.x - p.x, q.y - p.y) < 1 - 1e-9) expected++;
    }
  }
  assert.equal(Number(await compare.locator('[data-testid=diff-summary]').getAttribute('data-changed')), expected);
  await screenshot(page, 'viewer-geometry-line');
  assert.deepEqual(problems, []);
});
