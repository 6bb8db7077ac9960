/**
 * The checker's part for geometry diagrams (check.ts calls it for kind `geometry`):
 * - record: the query's points exist; segments, circles and polygons name points that exist;
 * - answer: recomputed from `meta.points` on an independent path (answer-check.ts);
 * - ambiguity: the answer's margin (plane.ts) is at least ROBUST_MARGIN_PX, i.e. no point the
 *   question names can move that far in any direction and change the answer; a located point
 *   lies at least three tolerances from every other point;
 * - pixels (generated images): every point's pixel is its dot's colour;
 * - gold: every call runs cleanly through the tool registry, one after another, and the edited
 *   image shows the answer: the red line runs above or below the point, the straight path between
 *   two points crosses it or not, exactly the answer's candidate is walled in by the red triangle,
 *   the two red segments share pixels or not, the path from the centre to the other end crosses
 *   the red circle or not. A task whose construction does not show its answer is refused.
 * It reports; it never edits a task.
 */
import type { RgbImage } from '../../core/image.js';
import { releasePixels } from '../../core/pixel-pool.js';
import { resolveMetadata, type PixelMetadata, type PointXY } from '../../tools/metadata.js';
import { getTool, runToolCall } from '../../tools/registry.js';
import type { ToolCall } from '../../tools/types.js';
import type { CheckIssue } from '../check-issue.js';
import { parseColour } from '../paint.js';
import type { TaskRecord } from '../record.js';
import { recomputeDiagramAnswer } from './answer-check.js';
import { distance, insideTriangle, lineAbove, longer, sameSide, segmentsCross } from './plane.js';
import { ROBUST_MARGIN_PX } from './profiles.js';

const DOT_COLOUR = parseColour('#111111');

function isRed(image: RgbImage, x: number, y: number): boolean {
  const i = (y * image.width + x) * 3;
  return image.data[i] === 255 && image.data[i + 1] === 0 && image.data[i + 2] === 0;
}

/** The pixels of the straight path from p to q (Bresenham, 8-connected, both ends included). */
export function pathPixels(p: PointXY, q: PointXY): PointXY[] {
  const out: PointXY[] = [];
  let { x, y } = p;
  const dx = Math.abs(q.x - x), dy = -Math.abs(q.y - y);
  const sx = x < q.x ? 1 : -1, sy = y < q.y ? 1 : -1;
  let err = dx + dy;
  for (;;) {
    out.push({ x, y });
    if (x === q.x && y === q.y) return out;
    const e2 = 2 * err;
    if (e2 >= dy) {
      err += dy;
      x += sx;
    }
    if (e2 <= dx) {
      err += dx;
      y += sy;
    }
  }
}

function pathCrossesRed(image: RgbImage, p: PointXY, q: PointXY): boolean {
  return pathPixels(p, q).some((r) => isRed(image, r.x, r.y));
}

/** Whether a 4-connected walk over non-red pixels from p can leave the box (x1..x2, y1..y2 inclusive): false when red walls it in. */
export function escapes(image: RgbImage, p: PointXY, box: { x1: number; y1: number; x2: number; y2: number }): boolean {
  const w = box.x2 - box.x1 + 1;
  const h = box.y2 - box.y1 + 1;
  const seen = new Uint8Array(w * h);
  const stack = [p.x - box.x1 + (p.y - box.y1) * w];
  if (isRed(image, p.x, p.y)) return false;
  seen[stack[0] as number] = 1;
  while (stack.length > 0) {
    const k = stack.pop() as number;
    const x = (k % w) + box.x1, y = Math.floor(k / w) + box.y1;
    if (x === box.x1 || y === box.y1 || x === box.x2 || y === box.y2) return true;
    for (const [nx, ny] of [[x + 1, y], [x - 1, y], [x, y + 1], [x, y - 1]] as const) {
      const j = nx - box.x1 + (ny - box.y1) * w;
      if (seen[j] || isRed(image, nx, ny)) continue;
      seen[j] = 1;
      stack.push(j);
    }
  }
  return false;
}

/** The margin of the stored answer (plane.ts), by family. */
function answerMargin(points: Readonly<Record<string, PointXY>>, task: TaskRecord): number {
  const q = task.query;
  const at = (q?.points ?? []).map((label) => points[label] as PointXY);
  switch (q?.family) {
    case 'above_below':
      return lineAbove(at[0] as PointXY, at[1] as PointXY, at[2] as PointXY).margin;
    case 'same_side':
      return sameSide(at[0] as PointXY, at[1] as PointXY, at[2] as PointXY, at[3] as PointXY).margin;
    case 'inside_triangle':
      return Math.min(...at.slice(3).map((p) => insideTriangle(at[0] as PointXY, at[1] as PointXY, at[2] as PointXY, p).margin));
    case 'segments_cross':
      return segmentsCross(at[0] as PointXY, at[1] as PointXY, at[2] as PointXY, at[3] as PointXY).margin;
    case 'longer_segment':
      return longer(at[0] as PointXY, at[1] as PointXY, at[2] as PointXY).margin;
    default:
      return Infinity;
  }
}

function checkRecordAndAnswer(task: TaskRecord, issues: CheckIssue[]): Record<string, PointXY> | null {
  const points = task.meta.points as Record<string, PointXY> | undefined;
  const query = task.query;
  if (!points || Object.keys(points).length === 0) {
    if (task.meta.source === 'generator') issues.push({ check: 'record', message: 'a generated diagram needs meta.points' });
    return null;
  }
  const known = (label: unknown) => typeof label === 'string' && label in points;
  const named = [
    ...((task.meta.segments as string[][] | undefined) ?? []).flat(),
    ...((task.meta.polygons as string[][] | undefined) ?? []).flat(),
    ...((task.meta.circles as { center: string }[] | undefined) ?? []).map((c) => c.center),
  ];
  for (const label of named) if (!known(label)) issues.push({ check: 'record', message: `the diagram draws point '${String(label)}', which meta.points lacks` });
  if (!query) return points;
  let expected: string;
  try {
    expected = recomputeDiagramAnswer(points, query);
  } catch (err) {
    issues.push({ check: 'answer', message: `the question has no single answer: ${(err as Error).message}` });
    return points;
  }
  if (expected !== task.answer) issues.push({ check: 'answer', message: `stored answer ${JSON.stringify(task.answer)} but the points give ${JSON.stringify(expected)} for ${JSON.stringify(query)}` });
  const margin = answerMargin(points, task);
  if (margin < ROBUST_MARGIN_PX) {
    issues.push({ check: 'answer', message: `ambiguous: the answer can change if the points move ${margin.toFixed(2)} px (at least ${ROBUST_MARGIN_PX} px is required)` });
  }
  if (query.family === 'locate') {
    const asked = points[query.points?.[0] ?? ''] as PointXY;
    const tolerance = query.tolerance_px ?? 0;
    for (const [label, p] of Object.entries(points)) {
      if (label !== query.points?.[0] && distance(asked, p) < 3 * tolerance) issues.push({ check: 'answer', message: `ambiguous: point ${label} lies within three tolerances (${3 * tolerance} px) of the located point` });
    }
  }
  return points;
}

/** What the gold construction shows on the edited image, as the answer it implies (null: it shows none). */
async function answerShown(task: TaskRecord, image: RgbImage, meta: PixelMetadata, outputs: RgbImage[]): Promise<string | null> {
  const q = task.query;
  const labels = q?.points ?? [];
  const at = labels.map((label) => meta.points?.[label] as PointXY);
  const last = outputs[outputs.length - 1] as RgbImage;
  switch (q?.family) {
    case 'above_below': {
      const c = at[2] as PointXY;
      const rows: number[] = [];
      for (let y = 0; y < last.height; y++) if (isRed(last, c.x, y)) rows.push(y);
      if (rows.length === 0 || rows.includes(c.y)) return null;
      if (rows.every((y) => y < c.y)) return 'above';
      return rows.every((y) => y > c.y) ? 'below' : null;
    }
    case 'same_side':
      return pathCrossesRed(last, at[2] as PointXY, at[3] as PointXY) ? 'no' : 'yes';
    case 'inside_triangle': {
      const corners = at.slice(0, 3);
      const box = {
        x1: Math.max(0, Math.min(...corners.map((p) => p.x)) - 2), y1: Math.max(0, Math.min(...corners.map((p) => p.y)) - 2),
        x2: Math.min(last.width - 1, Math.max(...corners.map((p) => p.x)) + 2), y2: Math.min(last.height - 1, Math.max(...corners.map((p) => p.y)) + 2),
      };
      const walled = at.slice(3).flatMap((p, i) => {
        const inBox = p.x > box.x1 && p.x < box.x2 && p.y > box.y1 && p.y < box.y2;
        return inBox && !escapes(last, p, box) ? [labels[3 + i] as string] : [];
      });
      return walled.length === 1 ? (walled[0] as string) : null;
    }
    case 'segments_cross': {
      // Each segment's own red pixels: the first on the task image, the second alone on it too;
      // they cross when the two share a pixel (within the second segment's box, where its pixels are).
      const first = outputs[0] as RgbImage;
      const alone = await runToolCall(image, (task.gold ?? [])[1] as ToolCall, meta);
      if (!alone.ok) return null;
      const [r, s] = [at[2] as PointXY, at[3] as PointXY];
      let shared = false;
      for (let y = Math.max(0, Math.min(r.y, s.y) - 1); y <= Math.min(image.height - 1, Math.max(r.y, s.y) + 1) && !shared; y++) {
        for (let x = Math.max(0, Math.min(r.x, s.x) - 1); x <= Math.min(image.width - 1, Math.max(r.x, s.x) + 1); x++) {
          if (isRed(alone.image, x, y) && isRed(first, x, y)) {
            shared = true;
            break;
          }
        }
      }
      releasePixels(alone.image);
      return shared ? 'yes' : 'no';
    }
    case 'longer_segment': {
      const [o, , b] = at as [PointXY, PointXY, PointXY];
      // The circle goes through the first-named end; the other end is beyond it when the path out crosses the ring.
      const outside = pathCrossesRed(last, o, b);
      if (isRed(last, b.x, b.y)) return null;
      return outside ? `${labels[0]}${labels[2]}` : `${labels[0]}${labels[1]}`;
    }
    default:
      return null;
  }
}

/**
 * The diagram checks above, on `image` (the task's own pixels) when given. The gold calls are run
 * here, for kind geometry, instead of by checkGold.
 */
export async function checkDiagram(task: TaskRecord, image: RgbImage | null): Promise<CheckIssue[]> {
  const issues: CheckIssue[] = [];
  const points = checkRecordAndAnswer(task, issues);
  const gold = task.gold ?? [];
  gold.forEach((call, i) => {
    if (!getTool(call.name)) issues.push({ check: 'gold', message: `gold call ${i + 1} names the unknown tool '${call.name}'` });
  });
  if (!image || issues.length > 0) return issues;
  let meta: PixelMetadata;
  try {
    meta = resolveMetadata(task.meta, image.width, image.height);
  } catch (err) {
    return [{ check: 'gold', message: `metadata unusable by the tools: ${(err as Error).message}` }];
  }
  if (points && task.meta.source === 'generator') {
    for (const [label, p] of Object.entries(meta.points ?? {})) {
      const i = (p.y * image.width + p.x) * 3;
      if (image.data[i] !== DOT_COLOUR[0] || image.data[i + 1] !== DOT_COLOUR[1] || image.data[i + 2] !== DOT_COLOUR[2]) {
        issues.push({ check: 'geometry', message: `point ${label} at (${p.x}, ${p.y}) is not on its dot: the pixel there is (${image.data[i]}, ${image.data[i + 1]}, ${image.data[i + 2]})` });
      }
    }
  }
  if (gold.length === 0) return issues;
  const outputs: RgbImage[] = [];
  let current = image;
  for (const [i, call] of gold.entries()) {
    const outcome = await runToolCall(current, call, meta);
    if (!outcome.ok) {
      issues.push({ check: 'gold', message: `gold call ${i + 1} (${call.name}) fails: [${outcome.error.class}] ${outcome.error.message}` });
      break;
    }
    outputs.push(outcome.image);
    current = outcome.image;
  }
  if (issues.length === 0 && task.query) {
    const shown = await answerShown(task, image, meta, outputs);
    if (shown !== task.answer) issues.push({ check: 'gold', message: `the gold construction shows ${shown === null ? 'no answer' : JSON.stringify(shown)} on the edited image, but the answer is ${JSON.stringify(task.answer)}` });
  }
  for (const made of outputs) if (made.data !== image.data) releasePixels(made);
  return issues;
}
