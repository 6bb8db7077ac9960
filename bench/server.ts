/**
 * Bounded load on the env server over loopback: 256 concurrent episodes × 4 steps (three tool
 * calls and an answer), then score and close. The server runs as its own process (the built
 * CLI), so client and server do not share an event loop. Prints p50/p99 step latency, the
 * health check's p99 alongside, errors and the server's memory; `soak` repeats the round.
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

interface Served {
  url: string;
  token: string;
  dir: string;
  task: Record<string, unknown>;
  stop: () => Promise<void>;
}

async function startServer(): Promise<Served> {
  const dir = await mkdtemp(join(tmpdir(), 'vistool-bench-server-'));
  const fixture = await tableFixture();
  await writeFile(join(dir, 'table.png'), fixture.png);
  const task = { id: 'bench', image: 'table.png', question: 'How many wins does Merckx have?', answer: '34', kind: 'table', difficulty: 1, meta: fixture.meta, source: 'bench' };
  // The allocator setting the trainer starts its server with (trainer/vistool_trainer/rollouts/env_client.py,
  // SERVER_MALLOC_ENV); VISTOOL_BENCH_MALLOC=default measures glibc's own behaviour instead.
  const malloc = process.env.VISTOOL_BENCH_MALLOC === 'default' ? {} : { MALLOC_MMAP_THRESHOLD_: '65536' };
  const child = spawn(process.execPath, ['bin/vistool.js', 'serve', '--root', dir, '--token-file', join(dir, 'token'), '--quiet'], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...malloc, ...process.env },
  });
  const stop = async () => {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const listening = await new Promise<{ url: string }>((resolve, reject) => {
      child.once('exit', (code) => reject(new Error(`server exited with ${code} before listening (is dist/cli.js built? run npm run build)`)));
      createInterface({ input: child.stdout! }).once('line', (line) => resolve(JSON.parse(line) as { url: string }));
    });
    return { url: listening.url, token: (await readFile(join(dir, 'token'), 'utf8')).trim(), dir, task, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

interface Round {
  steps: number;
  errors: number;
  seconds: number;
  p50: number;
  p99: number;
  /** Health-check latency while the round runs: what any other client waits for the event loop. */
  healthP99: number;
  rssBytes: number;
}

/** EPISODES concurrent episodes × the CALLS, then score and close; a health check every 20 ms alongside. */
async function runRound(served: Served): Promise<Round> {
  const { url, token, dir, task } = served;
  const post = async (path: string, body: unknown, method = 'POST') => {
    const res = await fetch(url + path, { method, headers: { authorization: `Bearer ${token}` }, body: method === 'POST' ? JSON.stringify(body) : null });
    const json = (await res.json()) as Record<string, unknown>;
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  const latencies: number[] = [];
  const healthTimes: number[] = [];
  let errors = 0;
  let done = false;
  const poller = (async () => {
    while (!done) {
      const t0 = performance.now();
      await fetch(url + '/v1/health', { headers: { authorization: `Bearer ${token}` } }).then((r) => r.json());
      healthTimes.push(performance.now() - t0);
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
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
  done = true;
  await poller;
  // The server collects its garbage once it has been idle for a second (env/server/idle-collector.ts):
  // what is still held after that is what a round did not give back.
  await new Promise((r) => setTimeout(r, 1500));
  const health = (await fetch(url + '/v1/health', { headers: { authorization: `Bearer ${token}` } }).then((r) => r.json())) as { rss_bytes: number };
  latencies.sort((a, b) => a - b);
  healthTimes.sort((a, b) => a - b);
  return { steps: latencies.length, errors, seconds, p50: percentile(latencies, 50), p99: percentile(latencies, 99), healthP99: percentile(healthTimes, 99), rssBytes: health.rss_bytes };
}

const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;

export async function benchServer(): Promise<void> {
  const served = await startServer();
  try {
    const before = (await fetch(served.url + '/v1/health', { headers: { authorization: `Bearer ${served.token}` } }).then((r) => r.json())) as { rss_bytes: number };
    const round = await runRound(served);
    console.log(`\nenv server: ${EPISODES} concurrent episodes × ${CALLS.length} steps on loopback`);
    console.log(`  steps ${round.steps}, errors ${round.errors}, wall ${round.seconds.toFixed(2)} s, ${(round.steps / round.seconds).toFixed(0)} steps/s`);
    console.log(`  step latency p50 ${round.p50.toFixed(1)} ms, p99 ${round.p99.toFixed(1)} ms; health p99 ${round.healthP99.toFixed(1)} ms`);
    console.log(`  server RSS before ${mib(before.rss_bytes)}, after ${mib(round.rssBytes)}`);
  } finally {
    await served.stop();
  }
}

/**
 * `npm run bench -- soak`: the same round VISTOOL_SOAK_ROUNDS times (5 by default) on one server,
 * printing each round's RSS, step latency and health-check latency. Memory that a round does not
 * give back shows as RSS that climbs from round to round; the ratio is against round 1.
 */
export async function benchSoak(): Promise<void> {
  const rounds = Number(process.env.VISTOOL_SOAK_ROUNDS ?? 5);
  const served = await startServer();
  try {
    const malloc = process.env.VISTOOL_BENCH_MALLOC === 'default' ? "glibc's default" : 'MALLOC_MMAP_THRESHOLD_=65536';
    console.log(`\nsoak: ${rounds} rounds of ${EPISODES} concurrent episodes × ${CALLS.length} steps on one server (allocator: ${malloc})`);
    let first: Round | undefined;
    for (let i = 1; i <= rounds; i++) {
      const round = await runRound(served);
      first ??= round;
      console.log(
        `  round ${i}: RSS ${mib(round.rssBytes)} (${(round.rssBytes / first.rssBytes).toFixed(2)}× round 1), step p50 ${round.p50.toFixed(1)} ms, ` +
          `p99 ${round.p99.toFixed(1)} ms, health p99 ${round.healthP99.toFixed(1)} ms, errors ${round.errors}`,
      );
    }
  } finally {
    await served.stop();
  }
}
