/**
 * When the dashboard's charts redraw: a few per animation frame, those on screen (or about to
 * be) first, so new data never blocks the page for long however many charts are chosen, and what
 * the user looks at changes first. Charts scrolled away follow in later frames: a chart's card
 * always tells what its canvas shows. The latest data wins: a chart marked dirty twice before a
 * frame draws once.
 */

export interface Drawable {
  readonly element: Element;
  draw(): void;
}

/** Time drawing may take per frame before the rest waits for the next one. */
const FRAME_BUDGET_MS = 12;

export class DrawQueue {
  private readonly dirty = new Set<Drawable>();
  private readonly onScreen = new WeakSet<Element>();
  private readonly observer: IntersectionObserver;
  private frame: number | null = null;

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
    if (this.frame !== null || this.dirty.size === 0) return;
    this.frame = requestAnimationFrame(() => this.flush());
  }

  private flush(): void {
    this.frame = null;
    const started = performance.now();
    const waiting = [...this.dirty];
    const order = [...waiting.filter((item) => this.onScreen.has(item.element)), ...waiting.filter((item) => !this.onScreen.has(item.element))];
    for (const item of order) {
      this.dirty.delete(item);
      item.draw();
      if (performance.now() - started > FRAME_BUDGET_MS) break;
    }
    this.kick();
  }
}
