/**
 * Which features a search question needs read, and the need-for-zoom verdict on them
 * (legibility.ts): the generator refuses a task that fails it and the checker verifies it again
 * from the record alone (objects, label size, targets, the gold zoom's box and factor).
 *
 * The deciding feature (what the answer is read from, or what finds the object it is read from):
 * text_on, colour_of and next_to — the label's cap height (the target's label; the label that
 * names the object; the neighbour's label); how_many — the counted shapes' detail. Needed in the
 * zoom's view: the deciding feature, and the shape of the object the question names by colour and
 * shape (text_on's target, next_to's anchor).
 */
import type { SearchFamily } from './families.js';
import { capHeight, judgeLegibility, shapeDetail, type Legibility, type ZoomBudget } from './legibility.js';
import type { SearchObject } from './objects.js';

export interface ZoomCase {
  width: number;
  height: number;
  family: SearchFamily;
  objects: readonly SearchObject[];
  /** The question's objects, as searchTargets gives them. */
  targets: readonly number[];
  fontSize: number;
  /** The gold zoom's box [x1, y1, x2, y2] and factor. */
  crop: readonly number[];
  factor: number;
}

/** The features a question needs, at native size (px): the deciding one, and every one needed in the zoom's view (the deciding one included). */
export interface SearchFeatures {
  deciding: number;
  needed: number[];
}

export function searchFeatures(c: Pick<ZoomCase, 'family' | 'objects' | 'targets' | 'fontSize'>): SearchFeatures {
  const box = (i: number) => (c.objects[i] as SearchObject).bbox;
  const cap = capHeight(c.fontSize);
  if (c.family === 'how_many') {
    const details = c.targets.map((i) => shapeDetail(box(i)));
    return { deciding: Math.min(...details), needed: details };
  }
  const named = c.family === 'colour_of' ? [] : [shapeDetail(box(c.targets[0] as number))];
  return { deciding: cap, needed: [cap, ...named] };
}

export function zoomNeed(c: ZoomCase, budget: ZoomBudget): Legibility {
  const features = searchFeatures(c);
  return judgeLegibility(c.width, c.height, features.deciding, features.needed, c.crop, c.factor, budget);
}
