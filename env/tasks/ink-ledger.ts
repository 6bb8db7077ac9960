/**
 * Who inked which pixel, claimed as the marks are painted: a pixel is its first mark's until a
 * second mark inks it too, and then it is a CONFLICT, attributed to neither.
 */
import type { BBox } from '../tools/metadata.js';

export const NO_INK = -1;
export const CONFLICT = -2;

/** The most marks a ledger tells apart (its ids are 16-bit). */
export const MAX_MARKS = 32767;

export class InkLedger {
  /** Per pixel: the mark's index, NO_INK, or CONFLICT. */
  readonly ids: Int16Array;
  conflicts = 0;
  private first = Infinity;
  /** Per mark: x1, y1, x2, y2 (inclusive) of every pixel it claimed, conflicts included. */
  private readonly touched: Int32Array;
  /** Marks that lost a pixel to a conflict: their boxes must be measured again. */
  private readonly lost = new Set<number>();

  constructor(readonly width: number, readonly height: number, readonly marks: number) {
    if (marks > MAX_MARKS) throw new Error(`a label map tells at most ${MAX_MARKS} marks apart; this scene has ${marks}`);
    this.ids = new Int16Array(width * height).fill(NO_INK);
    this.touched = new Int32Array(marks * 4);
    for (let m = 0; m < marks; m++) this.touched.set([width, height, -1, -1], m * 4);
  }

  claim(x: number, y: number, mark: number): void {
    const pixel = y * this.width + x;
    const current = this.ids[pixel] as number;
    if (current === NO_INK) this.ids[pixel] = mark;
    else if (current !== mark && current !== CONFLICT) {
      this.ids[pixel] = CONFLICT;
      this.conflicts++;
      this.lost.add(current);
      this.lost.add(mark);
      if (pixel < this.first) this.first = pixel;
    } else if (current === CONFLICT) this.lost.add(mark);
    const t = this.touched;
    const o = mark * 4;
    if (x < (t[o] as number)) t[o] = x;
    if (y < (t[o + 1] as number)) t[o + 1] = y;
    if (x > (t[o + 2] as number)) t[o + 2] = x;
    if (y > (t[o + 3] as number)) t[o + 3] = y;
  }

  /** Claims every pixel of a box (half-open, inside the canvas): a bar, a swatch. */
  claimBox(box: BBox, mark: number): void {
    if (box.x2 <= box.x1 || box.y2 <= box.y1) return;
    for (let y = box.y1; y < box.y2; y++) {
      const start = y * this.width + box.x1;
      const end = start + (box.x2 - box.x1);
      let clear = true;
      for (let p = start; p < end && clear; p++) clear = this.ids[p] === NO_INK;
      // The usual case, a row nothing else has inked, is one fill; otherwise pixel by pixel.
      if (clear) this.ids.fill(mark, start, end);
      else for (let x = box.x1; x < box.x2; x++) this.claim(x, y, mark);
    }
    this.claim(box.x1, box.y1, mark);
    this.claim(box.x2 - 1, box.y2 - 1, mark);
  }

  firstConflict(): { x: number; y: number } | null {
    return this.first === Infinity ? null : { x: this.first % this.width, y: Math.floor(this.first / this.width) };
  }

  /** Each mark's own pixels, boxed (half-open); null for a mark left with none. */
  extents(): (BBox | null)[] {
    const out: (BBox | null)[] = [];
    for (let m = 0; m < this.marks; m++) {
      const [tx1, ty1, tx2, ty2] = this.touched.subarray(m * 4, m * 4 + 4) as unknown as [number, number, number, number];
      if (tx2 < 0) out.push(null);
      else if (!this.lost.has(m)) out.push({ x1: tx1, y1: ty1, x2: tx2 + 1, y2: ty2 + 1 });
      else out.push(this.rescan(m, tx1, ty1, tx2, ty2));
    }
    return out;
  }

  private rescan(m: number, tx1: number, ty1: number, tx2: number, ty2: number): BBox | null {
    let box: BBox | null = null;
    for (let y = ty1; y <= ty2; y++) {
      const row = y * this.width;
      for (let x = tx1; x <= tx2; x++) {
        if (this.ids[row + x] !== m) continue;
        if (!box) box = { x1: x, y1: y, x2: x + 1, y2: y + 1 };
        else {
          if (x < box.x1) box.x1 = x;
          if (x + 1 > box.x2) box.x2 = x + 1;
          box.y2 = y + 1;
        }
      }
    }
    return box;
  }
}
