/**
 * The generator's only source of randomness: sfc32 (a small, fast, well-tested 128-bit-state
 * PRNG) seeded from named streams. Same seed words → same sequence on every machine.
 * Never use Math.random anywhere in env/tasks: determinism of the data set depends on it.
 *
 * A task's stream is `taskStream(seed, split, index, attempt)`: the split is one of the four
 * state words, so train, val and test draw from disjoint generator states by construction
 * (not by luck of a hash), and a repair attempt re-rolls without touching other tasks.
 */

/** 32-bit integer hash (splitmix32 finaliser): spreads nearby inputs across the state space. */
export function mix32(value: number): number {
  let z = (value + 0x9e3779b9) | 0;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
  return (z ^ (z >>> 16)) >>> 0;
}

/** FNV-1a over a string, for seeding sub-streams by name ("kind", "difficulty", ...). */
export function hashString(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(words: readonly [number, number, number, number]) {
    this.a = words[0] >>> 0;
    this.b = words[1] >>> 0;
    this.c = words[2] >>> 0;
    this.d = words[3] >>> 0;
    // Warm-up, as sfc32's authors recommend, so weak seeds (zeros) decorrelate.
    for (let i = 0; i < 12; i++) this.nextUint32();
  }

  nextUint32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    return this.nextUint32() / 4294967296;
  }

  /** Uniform integer in [min, max], both inclusive. */
  int(min: number, max: number): number {
    if (!Number.isInteger(min) || !Number.isInteger(max) || max < min) throw new Error(`Rng.int needs integers min <= max, got ${min}, ${max}`);
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('Rng.pick from an empty list');
    return items[Math.floor(this.next() * items.length)] as T;
  }

  /** A shuffled copy (Fisher–Yates). */
  shuffle<T>(items: readonly T[]): T[] {
    const out = items.slice();
    for (let i = out.length - 1; i > 0; i--) {
      const j = Math.floor(this.next() * (i + 1));
      const tmp = out[i] as T;
      out[i] = out[j] as T;
      out[j] = tmp;
    }
    return out;
  }

  /** `count` distinct items, in random order. */
  sample<T>(items: readonly T[], count: number): T[] {
    if (count > items.length) throw new Error(`Rng.sample: asked for ${count} of ${items.length} items`);
    return this.shuffle(items).slice(0, count);
  }

  /** A child stream named `label`: drawing from it never shifts this stream. */
  fork(label: string): Rng {
    return new Rng([mix32(this.a ^ hashString(label)), mix32(this.b), mix32(this.c ^ 0x5bd1e995), mix32(this.d + hashString(label))]);
  }
}

export const SPLITS = ['train', 'val', 'test'] as const;
export type Split = (typeof SPLITS)[number];

const SPLIT_WORD: Readonly<Record<Split, number>> = { train: 0x7472, val: 0x76616c, test: 0x74657374 };

/** The stream of one task: disjoint per split, per index and per repair attempt. */
export function taskStream(seed: number, split: Split, index: number, attempt: number): Rng {
  return new Rng([mix32(seed), SPLIT_WORD[split], mix32(index ^ 0x1234567), mix32(attempt + 0x2545f491)]);
}
