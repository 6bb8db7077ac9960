/**
 * Point references in tool calls: a model names a point by its label ("A", resolved through the
 * image's metadata `points`, as band tools resolve labels through bands) or gives it as pixel
 * coordinates [x, y] (any image, with or without metadata). This module only turns a reference
 * into a pixel or a message the model can act on; it never paints.
 *
 * Coordinates are rounded to the nearest pixel (as mark_point and the line tools round); a point
 * off the image, an unknown label, an ambiguous one, or a label on an image without labelled
 * points is an E4 error naming what there is.
 */
import type { ErrorClass } from '../core/errors.js';
import { closestLabel, listLabels, lookupLabel } from './labels.js';
import type { PixelMetadata, PointXY } from './metadata.js';
import type { LabelMatch } from './types.js';

/** The JSON Schema of one point reference: a label or a pair of pixel coordinates. */
export function pointRefSchema(description: string): Record<string, unknown> {
  return {
    anyOf: [
      { type: 'string', minLength: 1 },
      { type: 'array', items: { type: 'number' }, minItems: 2, maxItems: 2 },
    ],
    description,
  };
}

/** A pair of point references (through, endpoints). */
export function pointPairSchema(description: string): Record<string, unknown> {
  return { type: 'array', items: pointRefSchema('a point label such as "A", or pixel coordinates [x, y]'), minItems: 2, maxItems: 2, description };
}

export interface ResolvedPoint extends PointXY {
  /** How the summary names it: the label as written in the image, or "(x, y)". */
  name: string;
  /** Set when the point was named by label. */
  match?: LabelMatch;
}

export type PointResolution = { ok: true; point: ResolvedPoint } | { ok: false; errorClass: ErrorClass; message: string };

/** The labelled points of an image, or an empty object when its metadata has none. */
export function labelledPoints(meta: PixelMetadata | undefined): Record<string, PointXY> {
  return meta?.points ?? {};
}

/** Resolves one reference against the image (`width` × `height`) and its metadata. */
export function resolvePointRef(ref: unknown, meta: PixelMetadata | undefined, width: number, height: number, argument: string): PointResolution {
  if (typeof ref === 'string') return resolveLabel(ref, meta, argument);
  if (Array.isArray(ref) && ref.length === 2 && ref.every((v) => typeof v === 'number')) {
    const [rawX, rawY] = ref as [number, number];
    const x = Math.round(rawX);
    const y = Math.round(rawY);
    if (!Number.isFinite(rawX) || !Number.isFinite(rawY) || x < 0 || y < 0 || x > width - 1 || y > height - 1) {
      return { ok: false, errorClass: 'E4', message: `${argument}: point [${rawX}, ${rawY}] is outside the image: x must be between 0 and ${width - 1} and y between 0 and ${height - 1} (pixels from the top-left corner)` };
    }
    return { ok: true, point: { x, y, name: `(${x}, ${y})` } };
  }
  return { ok: false, errorClass: 'E3', message: `${argument}: a point is a label such as "A" or pixel coordinates [x, y]; got ${JSON.stringify(ref) ?? 'nothing'}` };
}

function resolveLabel(label: string, meta: PixelMetadata | undefined, argument: string): PointResolution {
  const points = labelledPoints(meta);
  const labels = Object.keys(points);
  if (labels.length === 0) {
    return { ok: false, errorClass: 'E4', message: `${argument}: this image has no labelled points, so '${label}' cannot be found; give the point as pixel coordinates [x, y] instead` };
  }
  const found = lookupLabel(label, labels);
  if (found.kind === 'unknown') {
    const near = closestLabel(label, labels);
    return { ok: false, errorClass: 'E4', message: `${argument}: unknown point '${label}'${near === null ? '' : ` (did you mean '${near}'?)`} — points are: ${listLabels(labels)}` };
  }
  if (found.kind === 'ambiguous') {
    return { ok: false, errorClass: 'E4', message: `${argument}: point '${label}' is ambiguous — it matches ${found.candidates.map((c) => `'${c}'`).join(' and ')} (${found.explained}); write the label exactly as shown` };
  }
  const at = points[found.match.matched] as PointXY;
  return { ok: true, point: { x: at.x, y: at.y, name: found.match.matched, match: found.match } };
}

/** The label-matched references of a call, for the outcome's `matches`. */
export function matchesOf(points: readonly ResolvedPoint[]): LabelMatch[] {
  return points.flatMap((p) => (p.match ? [p.match] : []));
}

/** Labels a prompt example can use: the image's first two, else none. */
export function examplePoints(meta: PixelMetadata | undefined): [string, string] | null {
  const labels = Object.keys(labelledPoints(meta));
  return labels.length >= 2 ? [labels[0] as string, labels[1] as string] : null;
}
