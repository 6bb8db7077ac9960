/**
 * Bounded load on the env server over loopback: 256 concurrent episodes × 4 steps (three tool
 * calls and an answer), then score and close. The server runs as its own process (the built
 * CLI), so client and server do not share an event loop. Prints p50/p99 step latency, errors
 * and the server's memory before and after.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, writeFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { tableFixture } from '../test/fixtures/render.js';

const EPISODES = 256;
const CALLS = [
  '<tool_call>{"name": "focus_on_columns_with_mask", "arguments": {"columns": ["Rider", "Wins"]}}</tool_call>',
  '<tool_call>{"name": "focus_on_rows_with_draw", "arguments": {"rows": ["Merckx"]}}</tool_call>',
  '<tool_call>{"name": "focus_on_rows_with_highlight", "arguments": {"rows": ["Hinault"]}}</tool_call>',
  'Merckx won <answer>34</answer>',
];

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

export async function benchServer(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'vistool-bench-server-'));
  const fixture = await tableFixture();
  await writeFile(join(dir, 'table.png'), fixture.png);
  const task = { id: 'bench', image: 'table.png', question: 'How many wins does Merckx have?', answer: '34', kind: 'table', difficulty: 1, meta: fixture.meta, source: 'bench' };
  const child = spawn(process.execPath, ['bin/vistool.js', 'serve', '--root', dir, '--token-file', join(dir, 'token'), '--quiet'], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const listening = await new Promise<{ url: string }>((resolve, reject) => {
      child.once('exit', (code) => reject(new Error(`server exited with ${code} before listening (is dist/cli.js built? run npm run build)`)));
      createInterface({ input: child.stdout! }).once('line', (line) => resolve(JSON.parse(line) as { url: string }));
    });
    const token = (await readFile(join(dir, 'token'), 'utf8')).trim();
    const post = async (path: string, body: unknown, method = 'POST') => {
      const res = await fetch(listening.url + path, { method, headers: { authorization: `Bearer ${token}` }, body: method === 'POST' ? JSON.stringify(body) : null });
      const json = (await res.json()) as Record<string, unknown>;
      if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(json)}`);
      return json;
    };
    const health = async () => (await fetch(listening.url + '/v1/health', { headers: { authorization: `Bearer ${token}` } }).then((r) => r.json())) as { rss_bytes: number };
    const before = await health();
    const latencies: number[] = [];
    let errors = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: EPISODES }, async () => {
        try {
          const { episode_id } = (await post('/v1/episodes', { task, task_dir: dir })) as { episode_id: string };
          for (const text of CALLS) {
            const t0 = performance.now();
            const step = (await post(`/v1/episodes/${episode_id}/step`, { text })) as { info: { errors: unknown[] } };
            latencies.push(performance.now() - t0);
            if (step.info.errors.length > 0) errors++;
          }
          await post(`/v1/episodes/${episode_id}/score`, {});
          await post(`/v1/episodes/${episode_id}`, undefined, 'DELETE');
        } catch (err) {
          errors++;
          console.error(String(err));
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    const after = await health();
    latencies.sort((a, b) => a - b);
    console.log(`\nenv server: ${EPISODES} concurrent episodes × ${CALLS.length} steps on loopback (${fixture.image.width}×${fixture.image.height} table)`);
    console.log(`  steps ${latencies.length}, errors ${errors}, wall ${seconds.toFixed(2)} s, ${(latencies.length / seconds).toFixed(0)} steps/s`);
    console.log(`  step latency p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms`);
    console.log(`  server RSS before ${(before.rss_bytes / 2 ** 20).toFixed(0)} MiB, after ${(after.rss_bytes / 2 ** 20).toFixed(0)} MiB`);
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    await rm(dir, { recursive: true, force: true });
  }
}
