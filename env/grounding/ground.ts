/**
 * OCR grounding: an image with no metadata → the band metadata the focus tools read, marked
 * `"source": "ocr"`. Text is detected everywhere, the layout is worked out from geometry and
 * flat shapes, and only the labels it needs are read. The result passes `resolveMetadata` for
 * the image it came from; it never contains a band without a label or a box outside the image.
 */
import type { RgbImage } from '../core/image.js';
import { bandKey, resolveMetadata, type BandFamily, type BBox, type ImageMetadata } from '../tools/metadata.js';
import { planLayout, type RequestedKind } from './classify.js';
import type { GroundedKind, PlannedBand } from './layout-plan.js';
import { findSegments, readSegments, type OcrOptions } from './ocr.js';
import type { TextSegment } from './segments.js';
import { ocrSessions } from './sessions.js';
import { findShapes } from './shapes.js';

export interface GroundingOptions extends OcrOptions {
  /** The layout to look for; 'auto' (default) decides from the image. */
  kind?: RequestedKind;
}

export interface GroundedLabel {
  family: BandFamily;
  text: string;
  box: BBox;
  confidence: number;
}

export interface Grounding {
  /** Pixel metadata, `source: 'ocr'`; empty of bands when no layout was found. */
  meta: ImageMetadata & { unit: 'pixels'; source: 'ocr' };
  /** The layout found, or null. */
  kind: GroundedKind | null;
  labels: GroundedLabel[];
  /** Labels left out, and why (a repeated label, nothing legible). */
  dropped: string[];
  timing: { detectMs: number; layoutMs: number; recognizeMs: number; totalMs: number };
}

export async function groundImage(image: RgbImage, options: GroundingOptions = {}): Promise<Grounding> {
  const sessions = options.sessions ?? (await ocrSessions());
  const started = performance.now();
  // Axes, ticks and rules out of the way first: a tick touching a label reads as "-".
  const shapes = findShapes(image);
  const clean = shapes.withoutLineArt;
  const segments = await findSegments(clean, { ...options, sessions });
  const detected = performance.now();
  const plan = planLayout(options.kind ?? 'auto', clean, segments, shapes);
  const planned = performance.now();
  const meta: Grounding['meta'] = { unit: 'pixels', source: 'ocr' };
  const result: Grounding = { meta, kind: plan?.kind ?? null, labels: [], dropped: [], timing: { detectMs: detected - started, layoutMs: planned - detected, recognizeMs: 0, totalMs: 0 } };
  if (plan) {
    const wanted = uniqueSegments(Object.values(plan.bands).flat());
    const read = await readSegments(clean, wanted, { ...options, sessions, titleCase: options.titleCase ?? true });
    const textOf = new Map(read.map((r) => [r.segment, r]));
    for (const [family, bands] of Object.entries(plan.bands) as [BandFamily, PlannedBand[]][]) {
      const out: Record<string, BBox> = {};
      for (const band of bands) {
        const r = textOf.get(band.label);
        const text = r?.text.trim() ?? '';
        if (text === '') {
          result.dropped.push(`${family}: a label at (${band.label.box.x1},${band.label.box.y1}) could not be read`);
          continue;
        }
        if (out[text]) {
          result.dropped.push(`${family}: '${text}' appears twice; only the first band is kept`);
          continue;
        }
        if (band.box.x2 <= band.box.x1 || band.box.y2 <= band.box.y1) {
          result.dropped.push(`${family}: the band of '${text}' has no area`);
          continue;
        }
        out[text] = band.box;
        result.labels.push({ family, text, box: band.box, confidence: r?.confidence ?? 0 });
      }
      if (Object.keys(out).length > 0) meta[bandKey(family)] = out;
    }
    meta.figure_bbox = plan.figure;
    if (plan.plot) meta.plot_bbox = plan.plot;
  }
  const finished = performance.now();
  result.timing.recognizeMs = finished - planned;
  result.timing.totalMs = finished - started;
  // The contract: whatever we return, the tools can use as is.
  resolveMetadata(meta, image.width, image.height);
  return result;
}

function uniqueSegments(bands: readonly PlannedBand[]): TextSegment[] {
  return [...new Set(bands.map((b) => b.label))];
}
