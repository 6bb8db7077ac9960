/**
 * Reusable pixel buffers for the images tools return.
 *
 * Why: every tool call writes a whole new image (800×600: 1.4 MB, 1600×1200: 5.8 MB). A fresh
 * buffer that big is a fresh mapping from the system — glibc maps blocks over its mmap
 * threshold, and the env server fixes that threshold at 64 KiB so freed blocks go back — so each
 * call paid one page fault per 4 KiB written, and V8 collected more often for the external
 * memory: at 1600×1200 a step with a fresh buffer costs 1.7–2.2× one with a reused buffer
 * (bench/tools.ts measures both).
 *
 * Ownership: a buffer from `takePixels` belongs to whoever holds the image it went into, like any
 * buffer; if nobody releases it, the garbage collector frees it as before. `releasePixels(image)`
 * hands it back for reuse, and with it the promise that nothing reads or writes `image.data`
 * again: the caller is the image's only holder and no encode or tool call on it is still running.
 * Only code that knows an image's whole life releases it: an episode (env/episodes/episode.ts:
 * a tool's output once the next output has replaced it, the current image when the episode
 * ends), a tool its own scratch images (zoom_in's crop once resampled, ocr's crop once read), and
 * the task generator a checked task's pixels and label-map ids (env/tasks/make-task.ts), a
 * stroke's coverage scratch (env/tasks/paint.ts) and the gold calls' outputs once checked
 * (env/tasks/check.ts), and the PNG writer its scanline buffer once compressed
 * (png-encode.ts). Every other holder just drops its buffers.
 * Releasing a buffer the pool did not hand out, or releasing one twice, does nothing. The pool is
 * per thread: each of the task generator's workers has its own.
 *
 * The pool keeps at most MAX_POOLED_BYTES, and `drainPixelPool` empties it (the env server does
 * when it falls idle, so an idle server holds no pixels).
 */
import type { RgbImage } from './rgb-image.js';

/** What the pool keeps at most: room for a round of concurrent 1600×1200 steps, and a bound on idle memory. */
export const MAX_POOLED_BYTES = 64 * 1024 * 1024;

/** Four size classes per doubling, so a buffer serves images up to 20 % smaller than it without waste beyond that. */
const CLASSES_PER_DOUBLING = 4;

const free = new Map<number, ArrayBuffer[]>();
let pooledBytes = 0;
/**
 * The views handed out and not yet released: what makes a second release, a foreign one, or a
 * stale one (through an old view of memory since handed out again) a no-op.
 */
const outstanding = new WeakSet<ArrayBufferView>();

/** The capacity of the size class `byteLength` falls in: the smallest m·2^k ≥ byteLength with m in 4…7 (or 8). */
export function sizeClass(byteLength: number): number {
  if (byteLength <= CLASSES_PER_DOUBLING) return CLASSES_PER_DOUBLING;
  const step = 2 ** (Math.floor(Math.log2(byteLength)) - Math.log2(CLASSES_PER_DOUBLING));
  return Math.ceil(byteLength / step) * step;
}

/** A buffer of `byteLength` bytes whose contents are undefined (write every byte), reused when one of its size class was released. */
export function takePixels(byteLength: number): Buffer {
  return lease(byteLength, (memory) => Buffer.from(memory, 0, byteLength));
}

/** `count` 32-bit integers from the pool (contents undefined), on the same terms as takePixels. */
export function takeInt32s(count: number): Int32Array {
  return lease(count * 4, (memory) => new Int32Array(memory, 0, count));
}

/** `count` 32-bit floats from the pool (contents undefined), on the same terms as takePixels. */
export function takeFloat32s(count: number): Float32Array {
  return lease(count * 4, (memory) => new Float32Array(memory, 0, count));
}

function lease<View extends ArrayBufferView>(byteLength: number, viewOf: (memory: ArrayBuffer) => View): View {
  const capacity = sizeClass(byteLength);
  const reused = takeFree(capacity);
  if (reused) pooledBytes -= reused.byteLength;
  // allocUnsafeSlow: a buffer of its own (not a slice of Node's small-buffer pool), not zero-filled.
  const view = viewOf(reused ?? (Buffer.allocUnsafeSlow(capacity).buffer as ArrayBuffer));
  outstanding.add(view);
  return view;
}

/**
 * A free buffer of `capacity`, or else the smallest free one up to twice that size. Images of
 * many sizes (a data set's tables run from 40k to 1.2M pixels) would otherwise each want their
 * own class, and a class met for the first time once the pool is full costs fresh pages.
 */
function takeFree(capacity: number): ArrayBuffer | undefined {
  const exact = free.get(capacity);
  if (exact && exact.length > 0) return exact.pop();
  let best = 0;
  for (const [size, buffers] of free) if (buffers.length > 0 && size > capacity && size <= 2 * capacity && (best === 0 || size < best)) best = size;
  return best === 0 ? undefined : free.get(best)?.pop();
}

/**
 * Hands `image.data` back for reuse. The caller must be the image's only holder, with nothing
 * running on it (see the ownership rule above). Buffers the pool did not hand out, and second
 * releases, are ignored; past MAX_POOLED_BYTES the buffer is left to the garbage collector.
 */
export function releasePixels(image: RgbImage): void {
  releaseBuffers(image.data);
}

/** Hands back views the pool gave (takePixels, takeInt32s, takeFloat32s), on the same terms as releasePixels. */
export function releaseBuffers(...views: ArrayBufferView[]): void {
  for (const view of views) {
    if (!outstanding.has(view)) continue;
    outstanding.delete(view);
    const buffer = view.buffer as ArrayBuffer;
    const capacity = buffer.byteLength;
    if (pooledBytes + capacity > MAX_POOLED_BYTES) continue;
    const list = free.get(capacity);
    if (list) list.push(buffer);
    else free.set(capacity, [buffer]);
    pooledBytes += capacity;
  }
}

/** Drops every pooled buffer (they are freed at the next collection). */
export function drainPixelPool(): void {
  free.clear();
  pooledBytes = 0;
}

/** Bytes the pool holds now, for tests and the server's health numbers. */
export function pooledPixelBytes(): number {
  return pooledBytes;
}
