import { test } from 'node:test';
import assert from 'node:assert/strict';
import { IdleCollector } from '../../env/server/idle-collector.js';

const MiB = 2 ** 20;
/** Allocates `count` MiB buffers and returns the RSS while they are still reachable. */
function rssWhileHolding(count: number): number {
  const buffers = Array.from({ length: count }, (_, i) => Buffer.alloc(MiB, i));
  return buffers.length > 0 ? process.memoryUsage().rss : 0;
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('an idle collector gives back garbage buffers once the server falls idle, and only once per busy spell', async () => {
  let idle = false;
  const collector = new IdleCollector(() => idle, 200);
  collector.maybeIdle(); // busy: a request with episodes open
  // The burst's buffers are garbage once this returns, and nothing allocates to start a collection.
  const held = rssWhileHolding(200);
  idle = true;
  collector.maybeIdle();
  await sleep(50);
  assert.equal(collector.collections, 0, 'not before the delay');
  await sleep(400);
  assert.equal(collector.collections, 1);
  const after = process.memoryUsage().rss;
  assert.ok(after < held - 100 * MiB, `RSS ${(held / MiB).toFixed(0)} → ${(after / MiB).toFixed(0)} MiB: the 200 MiB of garbage was not given back`);
  // Health checks on an idle server start no further collection.
  collector.maybeIdle();
  collector.maybeIdle();
  await sleep(400);
  assert.equal(collector.collections, 1);
  collector.stop();
});

test('a server that turns busy again before the delay is not collected', async () => {
  let idle = false;
  const collector = new IdleCollector(() => idle, 200);
  collector.maybeIdle();
  idle = true;
  collector.maybeIdle();
  idle = false; // a new episode starts
  await sleep(350);
  assert.equal(collector.collections, 0);
  idle = true;
  collector.maybeIdle();
  await sleep(350);
  assert.equal(collector.collections, 1);
  collector.stop();
});
