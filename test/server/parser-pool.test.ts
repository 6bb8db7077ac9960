import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { parseAction } from '../../env/actions/parse.js';
import { OFF_THREAD_CHARS, ParserPool } from '../../env/server/parser-pool.js';

/** The worker the CLI bundle starts (esbuild.mjs builds it beside dist/cli.js). */
const BUNDLED = join(__dirname, '..', '..', 'dist', 'parse-worker.js');

const LONG_PYTHON = '```python\nx = zoom_in(image_1, [1, 2, 3, 4])\n```\n'.repeat(21_000); // just under the 1 MiB message limit; the slowest kind to parse

test('long messages parse on a worker to exactly what parseAction gives, short ones inline', async () => {
  const pool = new ParserPool(2);
  try {
    const short = '<tool_call>{"name": "zoom_in", "arguments": {"bbox": [0, 0, 9, 9]}}</tool_call>';
    const inline = pool.parse(short);
    assert.ok(!(inline instanceof Promise), 'a short message costs no thread hop');
    assert.deepEqual(inline, parseAction(short));
    const texts = [LONG_PYTHON, 'x'.repeat(OFF_THREAD_CHARS) + '<answer>7</answer>', '<tool_call>'.repeat(10_000), LONG_PYTHON.slice(0, 50_000)];
    const results = await Promise.all(texts.map((text) => pool.parse(text, { imageVariables: ['image_with_zoom'] })));
    texts.forEach((text, i) => assert.deepEqual(results[i], parseAction(text, { imageVariables: ['image_with_zoom'] })));
  } finally {
    await pool.close();
  }
});

test('the event loop keeps running while a megabyte message is parsed', async () => {
  const pool = new ParserPool(1);
  try {
    await pool.parse('x'.repeat(OFF_THREAD_CHARS)); // the worker is up
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    const started = performance.now();
    await pool.parse(LONG_PYTHON);
    clearInterval(timer);
    // Inline, this parse holds the loop for its whole length and no tick runs at all.
    assert.ok(ticks >= 3, `${ticks} timer ticks in ${Math.round(performance.now() - started)} ms of parsing`);
  } finally {
    await pool.close();
  }
});

test('a worker that dies mid-parse is replaced and its messages are parsed inline: no step fails', async () => {
  const pool = new ParserPool(1);
  try {
    const pending = pool.parse(LONG_PYTHON);
    const workers = (pool as unknown as { workers: { worker: Worker }[] }).workers;
    await workers[0]!.worker.terminate();
    assert.deepEqual(await pending, parseAction(LONG_PYTHON));
    assert.deepEqual(await pool.parse(LONG_PYTHON.slice(0, 40_000)), parseAction(LONG_PYTHON.slice(0, 40_000)), 'a new worker takes over');
  } finally {
    await pool.close();
  }
  assert.deepEqual(pool.parse(LONG_PYTHON.slice(0, 40_000)), parseAction(LONG_PYTHON.slice(0, 40_000)), 'after close, inline');
});

test('the bundled worker beside dist/cli.js parses as the source does', { skip: !existsSync(BUNDLED) && 'run npm run build first' }, async () => {
  const worker = new Worker(BUNDLED);
  try {
    const reply = await new Promise<{ id: number; parsed: unknown }>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
      worker.postMessage({ id: 7, text: LONG_PYTHON, options: {} });
    });
    assert.equal(reply.id, 7);
    assert.deepEqual(reply.parsed, parseAction(LONG_PYTHON));
  } finally {
    await worker.terminate();
  }
});
