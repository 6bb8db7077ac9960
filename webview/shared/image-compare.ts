/**
 * A tool call's images side by side: the image the tool read and the one it produced, with a
 * shared zoom and a difference overlay drawn on a canvas. Images load from the host's resource
 * URLs; the overlay reads their pixels, so they must be same-origin (they are, in both hosts).
 */
import { button, h, replaceChildren } from './dom.js';
import { pixelDifference } from './image-diff.js';

function loaded(image: HTMLImageElement): Promise<void> {
  if (image.complete && image.naturalWidth > 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    image.addEventListener('load', () => resolve(), { once: true });
    image.addEventListener('error', () => reject(new Error(`image ${image.src} did not load`)), { once: true });
  });
}

function pixelsOf(image: HTMLImageElement): ImageData {
  const canvas = document.createElement('canvas');
  canvas.width = image.naturalWidth;
  canvas.height = image.naturalHeight;
  const context = canvas.getContext('2d', { willReadFrequently: true });
  if (!context) throw new Error('no 2D canvas context');
  context.drawImage(image, 0, 0);
  return context.getImageData(0, 0, canvas.width, canvas.height);
}

/**
 * The width an image is shown at: the zoom times its width, where an image narrower than
 * ZOOM_BASE_WIDTH counts as that wide. A 800×600 chart at the default zoom (0.5) is 400 px wide as
 * before, and the micro model's 224×112 charts are 280 px instead of 112×56 thumbnails nobody can
 * read.
 */
export const ZOOM_BASE_WIDTH = 560;

export function displayWidth(natural: number, zoom: number, baseWidth = ZOOM_BASE_WIDTH): number {
  return Math.round(Math.max(natural, baseWidth) * zoom);
}

export class ImageCompare {
  readonly element: HTMLElement;
  private readonly images: HTMLImageElement[] = [];
  private readonly diffBox = h('div', { class: 'diff-box', hidden: true });
  private diffCanvas: HTMLCanvasElement | null = null;
  private zoom = 1;

  /**
   * `baseWidth`: images narrower than this are shown as if they were this wide (displayWidth); the
   * rollout viewer passes ZOOM_BASE_WIDTH, the playground 0 (it picks its own zoom for small images).
   */
  constructor(
    beforeUrl: string,
    afterUrl: string | null,
    labels: { before: string; after: string },
    private readonly baseWidth = 0,
  ) {
    const figure = (url: string, caption: string, role: string) => {
      const image = h('img', { src: url, alt: `${caption} image`, 'data-role': role, loading: 'lazy', decoding: 'async' });
      this.images.push(image);
      const size = h('span', { class: 'muted image-size' });
      image.addEventListener('load', () => {
        size.textContent = ` ${image.naturalWidth}×${image.naturalHeight}`;
        this.applyZoom();
      });
      return h('figure', { class: 'compare-figure' }, h('figcaption', null, caption, size), h('div', { class: 'image-frame' }, image));
    };
    const figures = [figure(beforeUrl, labels.before, 'before')];
    if (afterUrl) figures.push(figure(afterUrl, labels.after, 'after'));
    const diffButton = afterUrl ? button('Difference', () => void this.toggleDiff(), { icon: 'diff', secondary: true, title: 'Show which pixels the tool changed', testid: 'diff-toggle' }) : null;
    this.element = h('div', { class: 'image-compare', 'data-testid': 'image-compare' }, h('div', { class: 'compare-row' }, ...figures, this.diffBox), diffButton ? h('div', { class: 'compare-actions' }, diffButton) : null);
  }

  setZoom(zoom: number): void {
    this.zoom = zoom;
    this.applyZoom();
  }

  private applyZoom(): void {
    for (const image of [...this.images, ...(this.diffCanvas ? [this.diffCanvas] : [])]) {
      const natural = image instanceof HTMLImageElement ? image.naturalWidth : image.width;
      if (natural <= 0) continue;
      const width = displayWidth(natural, this.zoom, this.baseWidth);
      image.style.width = `${width}px`;
      // Upscaled pixels stay sharp: a chart's thin lines and small labels are what the tools edit.
      image.classList.toggle('upscaled', width > natural);
    }
  }

  private async toggleDiff(): Promise<void> {
    if (!this.diffBox.hidden) {
      this.diffBox.hidden = true;
      return;
    }
    this.diffBox.hidden = false;
    const [before, after] = this.images;
    if (!before || !after) return;
    try {
      await Promise.all([loaded(before), loaded(after)]);
    } catch (err) {
      replaceChildren(this.diffBox, h('p', { class: 'muted' }, (err as Error).message));
      return;
    }
    if (before.naturalWidth !== after.naturalWidth || before.naturalHeight !== after.naturalHeight) {
      replaceChildren(this.diffBox, h('p', { class: 'muted', 'data-testid': 'diff-summary' }, `The tool changed the image size (${before.naturalWidth}×${before.naturalHeight} → ${after.naturalWidth}×${after.naturalHeight}), as zoom_in does: no pixel difference to show.`));
      return;
    }
    const a = pixelsOf(before);
    const b = pixelsOf(after);
    const diff = pixelDifference(a.data, b.data, a.width, a.height);
    const canvas = h('canvas', { 'data-role': 'difference', role: 'img', 'aria-label': 'pixels changed by the tool' });
    canvas.width = a.width;
    canvas.height = a.height;
    const overlay = new ImageData(a.width, a.height);
    overlay.data.set(diff.overlay);
    canvas.getContext('2d')?.putImageData(overlay, 0, 0);
    this.diffCanvas = canvas;
    const percent = ((100 * diff.changed) / diff.total).toFixed(1);
    replaceChildren(
      this.diffBox,
      h('figure', { class: 'compare-figure' }, h('figcaption', { 'data-testid': 'diff-summary', 'data-changed': diff.changed }, `difference: ${diff.changed.toLocaleString('en')} pixels changed (${percent}%)`), h('div', { class: 'image-frame' }, canvas)),
    );
    this.applyZoom();
  }
}
