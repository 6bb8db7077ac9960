/**
 * Draws text runs into an RGB image from glyph rasters (glyph-cache.ts): glyph by glyph along
 * the baseline, the pen advancing by the metrics table's advances — the numbers layout
 * estimated every ink box from, so a label lands where its estimate says (no kerning: estimates
 * assumed none) and the checker verifies the ink the glyph rasters really hold. Reports each
 * pixel it inks, which is how the label map knows who painted what.
 */
import type { RgbImage } from '../core/image.js';
import { faceOf, glyphCode, PHASES, type GlyphRef } from './glyph-cache.js';
import { parseHexColour } from './hex-colour.js';
import type { InkLedger } from './ink-ledger.js';
import type { TextRun } from './scene.js';
import { glyphAdvance } from './text-metrics.js';

export interface PlacedGlyph extends GlyphRef {
  /** The origin's pixel; the sub-pixel rest is in the phases. */
  x: number;
  y: number;
}

/** Where each inked glyph of a run goes. */
export function placeGlyphs(run: TextRun): PlacedGlyph[] {
  const angle = (run.rotate * Math.PI) / 180;
  const cos = run.rotate === 0 ? 1 : Math.cos(angle);
  const sin = run.rotate === 0 ? 0 : Math.sin(angle);
  const placed: PlacedGlyph[] = [];
  const face = faceOf(run.fontSize, run.weight, run.rotate);
  let pen = 0;
  for (const char of run.content) {
    if (char.trim() !== '') {
      const qx = Math.round((run.x + pen * cos) * PHASES);
      const qy = Math.round((run.y + pen * sin) * PHASES);
      const x = Math.floor(qx / PHASES);
      const y = Math.floor(qy / PHASES);
      const phaseX = qx - x * PHASES;
      const phaseY = qy - y * PHASES;
      placed.push({ char, fontSize: run.fontSize, weight: run.weight, rotate: run.rotate, phaseX, phaseY, face, code: glyphCode(char, phaseX, phaseY), x, y });
    }
    pen += glyphAdvance(char, run.fontSize, run.weight);
  }
  return placed;
}

/** round(t / 255) for 0 ≤ t ≤ 255², in integers. */
function div255(t: number): number {
  const u = t + 128;
  return (u + (u >> 8)) >> 8;
}

/**
 * Paints a mark's glyphs (loaded beforehand) over the image, each pixel blended by its coverage
 * as cairo's OVER does, and claims every pixel inked for the mark; pixels off the canvas are dropped.
 */
export function paintGlyphs(image: RgbImage, fill: string, glyphs: readonly PlacedGlyph[], ledger: InkLedger, mark: number): void {
  const [r, g, b] = parseHexColour(fill);
  const { width, height, data } = image;
  for (const glyph of glyphs) {
    const raster = glyph.face.rasters.get(glyph.code);
    if (raster === undefined) throw new Error(`glyph '${glyph.char}' of ${glyph.face.id} was painted before it was loaded`);
    if (!raster) continue;
    const left = glyph.x + raster.left;
    const top = glyph.y + raster.top;
    const x1 = Math.max(0, -left), x2 = Math.min(raster.width, width - left);
    const y1 = Math.max(0, -top), y2 = Math.min(raster.height, height - top);
    for (let y = y1; y < y2; y++) {
      const row = y * raster.width;
      const py = top + y;
      const pixelRow = py * width + left;
      for (let x = x1; x < x2; x++) {
        const c = raster.coverage[row + x] as number;
        if (c === 0) continue;
        const o = (pixelRow + x) * 3;
        const k = 255 - c;
        data[o] = div255((data[o] as number) * k + r * c);
        data[o + 1] = div255((data[o + 1] as number) * k + g * c);
        data[o + 2] = div255((data[o + 2] as number) * k + b * c);
        ledger.claim(left + x, py, mark);
      }
    }
  }
}
