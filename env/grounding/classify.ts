/**
 * Which layout an image has, when the caller does not say: bars standing on a baseline make a
 * vertical-bar chart, bars from a common left edge a horizontal-bar chart, text in a grid of
 * rows and columns a table; a chart without bars (a line chart) still has categories along an
 * x axis. Returns the plan of the first layout that fits, or null when none does.
 */
import type { RgbImage } from '../core/image.js';
import { planHorizontalBars, planVerticalBars, findHorizontalBars, findVerticalBars } from './layout-chart.js';
import type { GroundedKind, LayoutPlan } from './layout-plan.js';
import { planTable } from './layout-table.js';
import type { TextSegment } from './segments.js';
import type { Shapes } from './shapes.js';

export type RequestedKind = GroundedKind | 'auto';

export function planLayout(kind: RequestedKind, image: RgbImage, segments: readonly TextSegment[], shapes: Shapes): LayoutPlan | null {
  switch (kind) {
    case 'table':
      return planTable(segments, image.width, image.height);
    case 'vbar':
      return planVerticalBars(image, segments, shapes);
    case 'hbar':
      return planHorizontalBars(image, segments, shapes);
    case 'auto':
      return autoLayout(image, segments, shapes);
  }
}

function autoLayout(image: RgbImage, segments: readonly TextSegment[], shapes: Shapes): LayoutPlan | null {
  const vertical = findVerticalBars(shapes, segments);
  const horizontal = findHorizontalBars(shapes, segments);
  const vCount = vertical?.bars.length ?? 0;
  const hCount = horizontal?.bars.length ?? 0;
  // Bars decide first: a chart's tick and value labels can look like a two-column table.
  if (vCount >= 2 && vCount >= hCount) {
    const plan = planVerticalBars(image, segments, shapes);
    if (plan) return plan;
  }
  if (hCount >= 2) {
    const plan = planHorizontalBars(image, segments, shapes);
    if (plan) return plan;
  }
  return planTable(segments, image.width, image.height) ?? planVerticalBars(image, segments, shapes) ?? planHorizontalBars(image, segments, shapes);
}
