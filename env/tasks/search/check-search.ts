/**
 * The checker's part for search scenes (check.ts calls it for kind `search`), from the record:
 * - record: every object is a known shape in a known colour with an odd-sided square integer box,
 *   inside the image, labels unique;
 * - answer: the objects the question names and the answer recomputed from `meta.objects` and the
 *   query (answer.ts), equal to the stored answer, `meta.targets` and `meta.target_bbox`; the
 *   answer is not a word of the question;
 * - gold: one zoom_in whose box holds every target;
 * - the need-for-zoom criterion (zoom-need.ts) under the budget: the one given to the checker, else
 *   the one the task was generated for, else the defaults (50176 pixels, 6 px);
 * - pixels (a freshly rendered task): each object's ink, read off the label map, is exactly its box.
 * It reports; it never edits a task.
 */
import type { BBox } from '../../tools/metadata.js';
import type { CheckIssue } from '../check-issue.js';
import type { LabelMap } from '../label-map.js';
import type { TaskRecord } from '../record.js';
import { answerInQuestion, searchAnswer, searchTargets } from './answer.js';
import { SEARCH_FAMILIES, type SearchFamily } from './families.js';
import type { ZoomBudget } from './legibility.js';
import type { SearchObject } from './objects.js';
import { COLOURS, DEFAULT_LEGIBLE_PX, DEFAULT_MAX_PIXELS, DEFAULT_SEARCH_SIZE, SHAPES } from './profiles.js';
import { zoomNeed } from './zoom-need.js';

const sameBox = (a: BBox, b: BBox) => a.x1 === b.x1 && a.y1 === b.y1 && a.x2 === b.x2 && a.y2 === b.y2;
const show = (b: BBox) => `(${b.x1},${b.y1})–(${b.x2},${b.y2})`;

function objectProblems(objects: readonly SearchObject[], width: number, height: number): string[] {
  const out: string[] = [];
  const labels = new Set<string>();
  objects.forEach((o, i) => {
    const b = o.bbox;
    if (!(SHAPES as readonly string[]).includes(o.shape)) out.push(`object ${i} has the unknown shape '${o.shape}'`);
    if (!(o.colour in COLOURS)) out.push(`object ${i} has the unknown colour '${o.colour}'`);
    const side = b.x2 - b.x1;
    if (![b.x1, b.y1, b.x2, b.y2].every(Number.isInteger) || side !== b.y2 - b.y1 || side % 2 === 0 || side <= 0) out.push(`object ${i}'s box ${show(b)} is not an odd-sided square with integer edges`);
    if (b.x1 < 0 || b.y1 < 0 || b.x2 > width || b.y2 > height) out.push(`object ${i}'s box ${show(b)} leaves the ${width}×${height} image`);
    if (o.text !== null) {
      if (labels.has(o.text)) out.push(`the label "${o.text}" appears twice`);
      labels.add(o.text);
    }
  });
  return out;
}

/** The budget the criterion is judged under: the checker's, else the generator's, else the defaults. */
export function budgetOf(task: Pick<TaskRecord, 'generator'>, given: Partial<ZoomBudget> = {}): ZoomBudget {
  return {
    maxPixels: given.maxPixels ?? task.generator?.max_pixels ?? DEFAULT_MAX_PIXELS,
    legiblePx: given.legiblePx ?? task.generator?.legible_px ?? DEFAULT_LEGIBLE_PX,
  };
}

function goldProblems(task: TaskRecord, target: BBox): { issues: CheckIssue[]; crop: number[]; factor: number } | { issues: CheckIssue[]; crop: null; factor: 0 } {
  const gold = task.gold ?? [];
  const call = gold[0];
  const bbox = call?.arguments.bbox;
  if (gold.length !== 1 || call?.name !== 'zoom_in' || !Array.isArray(bbox) || bbox.length !== 4 || !bbox.every((v) => typeof v === 'number')) {
    return { issues: [{ check: 'gold', message: `a search task's gold is one zoom_in call with a bbox [x1, y1, x2, y2]; got ${JSON.stringify(gold)}` }], crop: null, factor: 0 };
  }
  const crop = bbox as number[];
  const factor = typeof call.arguments.factor === 'number' ? call.arguments.factor : 2;
  const holds = (crop[0] as number) <= target.x1 && (crop[1] as number) <= target.y1 && (crop[2] as number) >= target.x2 && (crop[3] as number) >= target.y2;
  return { issues: holds ? [] : [{ check: 'gold', message: `the gold zoom's box ${JSON.stringify(crop)} does not hold the targets' box ${show(target)}` }], crop, factor };
}

export function checkSearch(task: TaskRecord, size: { width: number; height: number } | null, labelMap: LabelMap | null, given: Partial<ZoomBudget> = {}): CheckIssue[] {
  const objects = task.meta.objects as SearchObject[] | undefined;
  const query = task.query;
  const fontSize = task.meta.label_font_size;
  if (!Array.isArray(objects) || objects.length === 0 || !query || typeof fontSize !== 'number' || !(SEARCH_FAMILIES as readonly string[]).includes(query.family)) {
    return [{ check: 'record', message: 'a search task needs meta.objects, meta.label_font_size and a query of a search family' }];
  }
  const [width, height] = size ? [size.width, size.height] : (task.generator?.image_size ?? DEFAULT_SEARCH_SIZE);
  const issues: CheckIssue[] = objectProblems(objects, width, height).map((message) => ({ check: 'record', message }));
  if (issues.length > 0) return issues;
  let targets: number[];
  let answer: string;
  try {
    targets = searchTargets(objects, query);
    answer = searchAnswer(objects, query);
  } catch (err) {
    return [{ check: 'answer', message: `the question has no single answer: ${(err as Error).message}` }];
  }
  if (answer !== task.answer) issues.push({ check: 'answer', message: `stored answer ${JSON.stringify(task.answer)} but the objects give ${JSON.stringify(answer)} for ${JSON.stringify(query)}` });
  if (answerInQuestion(task.question, answer)) issues.push({ check: 'answer', message: `the answer "${answer}" appears in the question` });
  if (JSON.stringify(task.meta.targets) !== JSON.stringify(targets)) issues.push({ check: 'record', message: `meta.targets ${JSON.stringify(task.meta.targets)} but the question names objects ${JSON.stringify(targets)}` });
  const box = targets.map((i) => (objects[i] as SearchObject).bbox).reduce((u, b) => ({ x1: Math.min(u.x1, b.x1), y1: Math.min(u.y1, b.y1), x2: Math.max(u.x2, b.x2), y2: Math.max(u.y2, b.y2) }));
  const stored = task.meta.target_bbox as BBox | undefined;
  if (!stored || !sameBox(stored, box)) issues.push({ check: 'record', message: `meta.target_bbox ${stored ? show(stored) : 'is missing'}; the targets' box is ${show(box)}` });
  const gold = goldProblems(task, box);
  issues.push(...gold.issues);
  if (gold.crop) {
    const budget = budgetOf(task, given);
    const verdict = zoomNeed({ width, height, family: query.family as SearchFamily, objects, targets, fontSize, crop: gold.crop, factor: gold.factor }, budget);
    if (verdict.atBudget >= budget.legiblePx) issues.push({ check: 'answer', message: `no zoom needed: the deciding feature is ${verdict.atBudget.toFixed(2)} px in the whole image at ${budget.maxPixels} pixels, legible (≥ ${budget.legiblePx} px)` });
    if (verdict.inZoom < budget.legiblePx) issues.push({ check: 'gold', message: `the gold zoom does not suffice: the smallest needed feature is ${verdict.inZoom.toFixed(2)} px in its view at ${budget.maxPixels} pixels (< ${budget.legiblePx} px)` });
  }
  if (labelMap) {
    if (labelMap.marks.length !== objects.length) issues.push({ check: 'geometry', message: `the scene has ${labelMap.marks.length} marks for ${objects.length} objects` });
    else objects.forEach((o, i) => {
      const ink = labelMap.extents[i];
      if (!ink || !sameBox(ink, o.bbox)) issues.push({ check: 'geometry', message: `object ${i}'s ink ${ink ? show(ink) : 'is missing'}, its box ${show(o.bbox)}` });
    });
  }
  return issues;
}
