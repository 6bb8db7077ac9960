/**
 * When the dashboard's charts redraw: those on screen (or about to be) a few per animation
 * frame, so new data never blocks the page for long however many charts are chosen; those
 * scrolled away when the page is idle (at the latest a second later), so a chart's card always
 * comes to tell what its canvas shows without competing with what the user looks at. The latest
 * data wins: a chart marked dirty twice before it is drawn draws once.
 *
 * A frame (or an idle period) starts another chart only when the time a draw has lately taken
 * still fits in what is left of it: checking after each draw instead let a frame run one whole
 * draw past its budget, which for Chart.js charts of 20–40 ms made frames of 60–80 ms.
 */

export interface Drawable {
  readonly element: Element;
  /** False when it did part of the work and wants another turn for the rest. */
  draw(): boolean;
}

/** Time drawing may take per frame before the rest waits for the next one. */
const FRAME_BUDGET_MS = 12;
/** How long a chart off screen may wait for an idle moment. */
const IDLE_TIMEOUT_MS = 1000;

export class DrawQueue {
  private readonly dirty = new Set<Drawable>();
  private readonly onScreen = new WeakSet<Element>();
  private readonly observer: IntersectionObserver;
  private frame: number | null = null;
  private idle: number | null = null;
  /** About what one draw takes (a moving average of the last ones), in ms. */
  private drawCost = 0;

  constructor() {
    // A margin of a few hundred pixels draws charts just before they scroll into view.
    this.observer = new IntersectionObserver(
      (entries) => {
        for (const entry of entries) {
          if (entry.isIntersecting) this.onScreen.add(entry.target);
          else this.onScreen.delete(entry.target);
        }
        this.kick();
      },
      { rootMargin: '300px 0px' },
    );
  }

  add(item: Drawable): void {
    this.observer.observe(item.element);
  }

  remove(item: Drawable): void {
    this.observer.unobserve(item.element);
    this.dirty.delete(item);
  }

  markDirty(item: Drawable): void {
    this.dirty.add(item);
    this.kick();
  }

  private kick(): void {
    const waiting = [...this.dirty];
    if (this.frame === null && waiting.some((item) => this.onScreen.has(item.element))) this.frame = requestAnimationFrame(() => this.flush());
    if (this.idle === null && waiting.some((item) => !this.onScreen.has(item.element))) this.idle = requestIdleCallback((deadline) => this.flushIdle(deadline), { timeout: IDLE_TIMEOUT_MS });
  }

  private flush(): void {
    this.frame = null;
    const started = performance.now();
    let drawn = 0;
    for (const item of this.inPageOrder()) {
      if (!this.onScreen.has(item.element)) continue;
      if (drawn > 0 && performance.now() - started + this.drawCost > FRAME_BUDGET_MS) break;
      this.draw(item);
      drawn += 1;
    }
    this.kick();
  }

  private flushIdle(deadline: IdleDeadline): void {
    this.idle = null;
    let drawn = 0;
    for (const item of this.inPageOrder()) {
      if (this.onScreen.has(item.element)) continue;
      // One chart per idle callback when the wait ran out: the page was busy, it must stay responsive.
      if (drawn > 0 && (deadline.didTimeout || deadline.timeRemaining() < this.drawCost)) break;
      this.draw(item);
      drawn += 1;
    }
    this.kick();
  }

  /** The charts waiting, first on the page first (the reward chart before the ones below it). */
  private inPageOrder(): Drawable[] {
    return [...this.dirty].sort((a, b) => (a.element.compareDocumentPosition(b.element) & Node.DOCUMENT_POSITION_FOLLOWING ? -1 : 1));
  }

  private draw(item: Drawable): void {
    const started = performance.now();
    // A chart that wants another turn stays in the queue.
    if (item.draw()) this.dirty.delete(item);
    const took = performance.now() - started;
    this.drawCost = this.drawCost === 0 ? took : 0.7 * this.drawCost + 0.3 * took;
  }
}
