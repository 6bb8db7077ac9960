/**
 * A counting semaphore: at most `permits` holders at once, waiters served first come first
 * served. The judge uses it to bound its requests in flight, so a rollout burst cannot flood the judge server.
 */
export class Semaphore {
  private available: number;
  private readonly waiters: (() => void)[] = [];

  constructor(permits: number) {
    if (!Number.isInteger(permits) || permits < 1) throw new Error(`Semaphore: permits must be a positive integer, got ${permits}`);
    this.available = permits;
  }

  /** Resolves when a permit is held; call the returned function exactly once to give it back. */
  async acquire(): Promise<() => void> {
    if (this.available > 0) {
      this.available--;
    } else {
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiters.shift();
      // Hand the permit straight to the next waiter so a newcomer cannot overtake it.
      if (next) next();
      else this.available++;
    };
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    const release = await this.acquire();
    try {
      return await task();
    } finally {
      release();
    }
  }
}
