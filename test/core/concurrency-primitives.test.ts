import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Semaphore } from '../../env/core/semaphore.js';
import { LruCache } from '../../env/core/lru-cache.js';

test('the semaphore admits at most its permits and serves waiters in arrival order', async () => {
  const semaphore = new Semaphore(2);
  const order: string[] = [];
  const releases: (() => void)[] = [];
  const take = (name: string) => semaphore.acquire().then((release) => { order.push(name); releases.push(release); });
  const all = [take('a'), take('b'), take('c'), take('d')];
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(order, ['a', 'b']);
  releases[0]?.();
  releases[0]?.(); // a second release of the same permit changes nothing
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(order, ['a', 'b', 'c']);
  releases[1]?.();
  await Promise.all(all);
  assert.deepEqual(order, ['a', 'b', 'c', 'd']);
  assert.throws(() => new Semaphore(0), /positive integer/u);
});

test('the LRU cache evicts the least recently used entry, and a read counts as use', () => {
  const cache = new LruCache<string, number>(2);
  cache.set('a', 1);
  cache.set('b', 2);
  assert.equal(cache.get('a'), 1);
  cache.set('c', 3);
  assert.equal(cache.get('b'), undefined);
  assert.equal(cache.get('a'), 1);
  assert.equal(cache.get('c'), 3);
  const none = new LruCache<string, number>(0);
  none.set('a', 1);
  assert.equal(none.size, 0);
});
