/**
 * One full garbage collection once the server falls idle (no open episode for `delayMs`).
 *
 * Why: a round of concurrent episodes leaves its pixel and PNG buffers as garbage outside V8's
 * heap. V8 frees them only at a collection, and an idle server allocates nothing that would start
 * one, so without this the server would sit on a burst's garbage (100–180 MiB measured after 256
 * concurrent episodes) until the next burst. A collection when nobody is waiting costs no one
 * latency. The pixel pool (env/core/pixel-pool.ts) is emptied first, so the buffers it kept for
 * the next burst are freed too. The trainer also starts the server with a fixed glibc mmap
 * threshold (trainer/vistool_trainer/rollouts/env_client.py) so that the freed buffers go back to
 * the system.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { drainPixelPool } from '../core/pixel-pool.js';

let collect: (() => void) | undefined;

/** V8's `gc()`, exposed at run time: `--expose-gc` only adds the function to new contexts. */
function fullCollection(): () => void {
  if (!collect) {
    setFlagsFromString('--expose-gc');
    collect = runInNewContext('gc') as () => void;
  }
  return collect;
}

export class IdleCollector {
  private timer: NodeJS.Timeout | undefined;
  /** Whether the server has been busy since the last collection: an idle one needs only one. */
  private busy = false;
  collections = 0;

  constructor(
    private readonly isIdle: () => boolean,
    private readonly delayMs = 1000,
  ) {}

  /**
   * Call after every request. Once the server turns idle after being busy, one collection runs
   * `delayMs` later if it is still idle then; requests to an idle server (health checks) start none.
   */
  maybeIdle(): void {
    if (!this.isIdle()) {
      this.busy = true;
      return;
    }
    if (!this.busy || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (!this.isIdle()) return;
      this.busy = false;
      drainPixelPool();
      fullCollection()();
      this.collections += 1;
    }, this.delayMs);
    this.timer.unref();
  }

  stop(): void {
    clearTimeout(this.timer);
  }
}
