/**
 * How big a string is when sharp draws it in DejaVu Sans: its advance and its ink box, from the
 * rendered-glyph table in fonts/dejavu-sans-metrics.ts. Layout uses these to place every label;
 * the checker then verifies the real pixels, so an estimate here can only cause a re-roll, never
 * a wrong band. Estimates err on the large side: kerning only pulls glyphs together, unknown
 * characters count as the widest glyph, and a pixel of anti-aliasing slack is added all round.
 */
import { DEJAVU_SANS_BOLD, DEJAVU_SANS_REGULAR, type GlyphMetrics } from './fonts/dejavu-sans-metrics.js';

export const FONT_FAMILY = 'DejaVu Sans';

export type FontWeight = 'normal' | 'bold';

/** Pixels of slack on every side of an estimated ink box: anti-aliasing and pixel snapping. */
export const INK_SLACK_PX = 1;

/** An ink box relative to the pen start (x) and the baseline (y, SVG orientation: down is +). */
export interface TextExtent {
  /** Sum of advances, in px: what text-anchor uses to place the string. */
  advance: number;
  left: number;
  right: number;
  /** Top of the ink (negative: above the baseline). */
  top: number;
  /** Bottom of the ink (positive below the baseline). */
  bottom: number;
}

const WIDEST: Record<FontWeight, GlyphMetrics> = {
  normal: [1000, -50, 1050, -250, 950],
  bold: [1100, -50, 1150, -250, 950],
};

/** A character's metrics; one the table lacks gets the widest box, so estimates err large. */
export function glyphMetrics(c: string, weight: FontWeight): GlyphMetrics {
  const table = weight === 'bold' ? DEJAVU_SANS_BOLD : DEJAVU_SANS_REGULAR;
  return table[c] ?? WIDEST[weight];
}

/** The advance and ink box of `text` at `fontSize` px, before slack. */
export function measureText(text: string, fontSize: number, weight: FontWeight = 'normal'): TextExtent {
  const scale = fontSize / 1000;
  let pen = 0;
  let left = Infinity;
  let right = -Infinity;
  let top = Infinity;
  let bottom = -Infinity;
  for (const c of text) {
    const [advance, xMin, xMax, yMin, yMax] = glyphMetrics(c, weight);
    if (xMax > xMin || yMax > yMin) {
      left = Math.min(left, pen + xMin * scale);
      right = Math.max(right, pen + xMax * scale);
      top = Math.min(top, -yMax * scale);
      bottom = Math.max(bottom, -yMin * scale);
    }
    pen += advance * scale;
  }
  if (left === Infinity) return { advance: pen, left: 0, right: 0, top: 0, bottom: 0 };
  return { advance: pen, left, right, top, bottom };
}

/** Width of the ink box including slack: how much horizontal room the label needs. */
export function inkWidth(text: string, fontSize: number, weight: FontWeight = 'normal'): number {
  const e = measureText(text, fontSize, weight);
  return e.right - e.left + 2 * INK_SLACK_PX;
}

/**
 * Vertical ink range that any label at this size stays within, relative to the baseline: the
 * union over capitals, digits, ascenders, descenders and accents in the glyph table.
 */
export function lineInk(fontSize: number): { top: number; bottom: number } {
  return { top: -0.95 * fontSize - INK_SLACK_PX, bottom: 0.25 * fontSize + INK_SLACK_PX };
}
