/**
 * A search question's answer from the scene's description alone (`meta.objects` and `query`), for
 * the generator and the checker: which objects the description names, the neighbour rule, and the
 * answer. Throws IllPosedQuestion when the description names no single object or the neighbour
 * could be read two ways. Pure: no pixels.
 */
import { IllPosedQuestion } from '../ill-posed.js';
import type { TaskQuery } from '../record.js';
import type { Direction, SearchFamily } from './families.js';
import type { SearchObject } from './objects.js';


/** An object whose centre lies this near (px) to the edge of the anchor's span is neither clearly in line nor clearly not. */
export const LEVEL_MARGIN_PX = 4;
/** The nearest neighbour must be nearer than the runner-up by this much (px). */
export const NEAREST_MARGIN_PX = 8;

/** The indices of the objects of this colour and shape. */
export function matching(objects: readonly SearchObject[], colour: string | undefined, shape: string | undefined): number[] {
  return objects.flatMap((o, i) => (o.colour === colour && o.shape === shape ? [i] : []));
}

function theOne(objects: readonly SearchObject[], colour: string | undefined, shape: string | undefined): number {
  const found = matching(objects, colour, shape);
  if (found.length !== 1) throw new IllPosedQuestion(`${found.length} objects are ${colour} ${shape}s; the question needs exactly one`);
  return found[0] as number;
}

/**
 * The nearest object in line with object `anchor` in `direction`: for left and right, the objects
 * wholly on that side whose centre's height lies within the anchor's rows (y1 ≤ centre < y2); for
 * above and below, within its columns. Nearest by the gap between the boxes. Ill-posed when an
 * object on that side has its centre within LEVEL_MARGIN_PX of the span's edge, or the runner-up's
 * gap is within NEAREST_MARGIN_PX of the nearest's; null when there is none.
 */
export function neighbourOf(objects: readonly SearchObject[], anchor: number, direction: Direction): number | null {
  const a = objects[anchor] as SearchObject;
  const horizontal = direction === 'left' || direction === 'right';
  const [lo, hi] = horizontal ? [a.bbox.y1, a.bbox.y2] : [a.bbox.x1, a.bbox.x2];
  const ranked: { index: number; gap: number }[] = [];
  objects.forEach((o, i) => {
    if (i === anchor) return;
    const gap = direction === 'right' ? o.bbox.x1 - a.bbox.x2 : direction === 'left' ? a.bbox.x1 - o.bbox.x2 : direction === 'below' ? o.bbox.y1 - a.bbox.y2 : a.bbox.y1 - o.bbox.y2;
    if (gap < 0) return;
    const twiceCentre = horizontal ? o.bbox.y1 + o.bbox.y2 : o.bbox.x1 + o.bbox.x2;
    if (Math.abs(twiceCentre - 2 * lo) < 2 * LEVEL_MARGIN_PX || Math.abs(twiceCentre - 2 * hi) < 2 * LEVEL_MARGIN_PX) {
      throw new IllPosedQuestion(`object ${i}'s centre is within ${LEVEL_MARGIN_PX} px of the edge of object ${anchor}'s span: in line or not is unclear`);
    }
    if (twiceCentre >= 2 * lo && twiceCentre < 2 * hi) ranked.push({ index: i, gap });
  });
  if (ranked.length === 0) return null;
  ranked.sort((p, q) => p.gap - q.gap);
  const [first, second] = ranked as [{ index: number; gap: number }, { index: number; gap: number } | undefined];
  if (second && second.gap - first.gap < NEAREST_MARGIN_PX) throw new IllPosedQuestion(`objects ${first.index} and ${second.index} are about equally near object ${anchor}`);
  return first.index;
}

/** The objects a question is about (the record's `meta.targets`), in a fixed order. */
export function searchTargets(objects: readonly SearchObject[], query: TaskQuery): number[] {
  switch (query.family as SearchFamily) {
    case 'text_on':
      return [theOne(objects, query.colour, query.shape)];
    case 'colour_of': {
      const found = objects.flatMap((o, i) => (o.text === query.text ? [i] : []));
      if (found.length !== 1) throw new IllPosedQuestion(`${found.length} objects carry "${query.text}"`);
      const only = found[0] as number;
      if (objects[only]?.shape !== query.shape) throw new IllPosedQuestion(`the object labelled "${query.text}" is a ${objects[only]?.shape}, not a ${query.shape}`);
      return [only];
    }
    case 'next_to': {
      const anchor = theOne(objects, query.colour, query.shape);
      const next = neighbourOf(objects, anchor, query.direction as Direction);
      if (next === null) throw new IllPosedQuestion(`no object is in line with the ${query.colour} ${query.shape} to its ${query.direction}`);
      return [anchor, next];
    }
    case 'how_many': {
      const found = matching(objects, query.colour, query.shape);
      if (found.length === 0) throw new IllPosedQuestion(`no object is a ${query.colour} ${query.shape}`);
      return found;
    }
    default:
      throw new IllPosedQuestion(`'${query.family}' is not a search family`);
  }
}

/** The answer the scene gives to the query. */
export function searchAnswer(objects: readonly SearchObject[], query: TaskQuery): string {
  const targets = searchTargets(objects, query);
  if (query.family === 'how_many') return String(targets.length);
  if (query.family === 'colour_of') return (objects[targets[0] as number] as SearchObject).colour;
  const read = objects[targets[targets.length - 1] as number] as SearchObject;
  if (read.text === null) throw new IllPosedQuestion(`the object the question reads (${read.colour} ${read.shape}) carries no label`);
  return read.text;
}

/** Whether the answer appears in the question as a word of its own (case-insensitive). */
export function answerInQuestion(question: string, answer: string): boolean {
  const escaped = answer.toLowerCase().replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(^|[^a-z0-9])${escaped}([^a-z0-9]|$)`).test(question.toLowerCase());
}
