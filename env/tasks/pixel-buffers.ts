/**
 * Reused pixel and label-map buffers. A task allocates two large buffers (its RGB image and the
 * label map's per-pixel ids, ~2 MB on a default canvas) and drops them a few milliseconds later;
 * at a few hundred tasks a second that churn of external memory is what sets off most of V8's
 * garbage collections. The data-set generator hands a finished task's buffers back here
 * (`recycle`), and the painter takes them again for the next task of the same size. Code that
 * never recycles (tests, `data check`) just allocates. Per thread: each worker has its own.
 */

/** Spare buffers per byte length: two tasks in flight per thread need no more. */
const SPARES_PER_SIZE = 4;
/** Distinct sizes kept (tasks of a data set come in a few canvas sizes). */
const SIZES_KEPT = 16;

const spares = new Map<number, ArrayBuffer[]>();

/** A buffer of exactly `bytes` bytes, reused when one was recycled; its contents are garbage (callers fill it). */
export function takeBuffer(bytes: number): ArrayBuffer {
  return spares.get(bytes)?.pop() ?? new ArrayBuffer(bytes);
}

/**
 * Hands buffers back for reuse. The caller must hold no other reference that it still uses:
 * the next task paints over them.
 */
export function recycle(...views: ArrayBufferView[]): void {
  for (const view of views) {
    const buffer = view.buffer;
    // Only whole buffers this module can hand out again (not slices of Node's shared pool).
    if (!(buffer instanceof ArrayBuffer) || view.byteOffset !== 0 || view.byteLength !== buffer.byteLength) continue;
    let list = spares.get(buffer.byteLength);
    if (!list) {
      if (spares.size >= SIZES_KEPT) spares.delete(spares.keys().next().value as number);
      list = [];
      spares.set(buffer.byteLength, list);
    }
    if (list.length < SPARES_PER_SIZE && !list.includes(buffer)) list.push(buffer);
  }
}
