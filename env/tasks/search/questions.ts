/**
 * The question families of search scenes, on the generator's side: each picks its target among the
 * scene's objects, makes the description unambiguous by recolouring the objects that would share
 * it (a colour change moves nothing and never changes whether a label fits), and writes the
 * question and the structured query. The answer is then read from the scene's description
 * (answer.ts), never from pixels.
 */
import { IllPosedQuestion } from '../ill-posed.js';
import type { Rng } from '../prng.js';
import type { TaskQuery } from '../record.js';
import { matching, neighbourOf } from './answer.js';
import { DIRECTIONS, type Direction, type SearchFamily } from './families.js';
import { labelFits, type SearchObject } from './objects.js';
import { COLOUR_NAMES, SHAPES } from './profiles.js';

/** Gives every object of this colour and shape except `keep` another colour. */
function recolourOthers(rng: Rng, objects: SearchObject[], colour: string, shape: string, keep: ReadonlySet<number>): void {
  for (const i of matching(objects, colour, shape)) {
    if (!keep.has(i)) (objects[i] as SearchObject).colour = rng.pick(COLOUR_NAMES.filter((c) => c !== colour));
  }
}

/** Gives the object another shape (its label dropped when it would not fit the new one). */
function reshape(rng: Rng, object: SearchObject, shape: string, fontSize: number): void {
  object.shape = rng.pick(SHAPES.filter((s) => s !== shape));
  if (!labelFits(object, fontSize)) object.text = null;
}

export interface AskedSearch {
  question: string;
  query: TaskQuery;
}

function textOn(rng: Rng, objects: SearchObject[]): AskedSearch {
  const labelled = objects.flatMap((o, i) => (o.text !== null ? [i] : []));
  if (labelled.length === 0) throw new IllPosedQuestion('no object carries a label');
  const target = objects[rng.pick(labelled)] as SearchObject;
  recolourOthers(rng, objects, target.colour, target.shape, new Set([objects.indexOf(target)]));
  return {
    question: `What is written on the ${target.colour} ${target.shape}? Answer with the text exactly as shown.`,
    query: { family: 'text_on', colour: target.colour, shape: target.shape },
  };
}

function colourOf(rng: Rng, objects: SearchObject[]): AskedSearch {
  const labelled = objects.filter((o) => o.text !== null);
  if (labelled.length === 0) throw new IllPosedQuestion('no object carries a label');
  const target = rng.pick(labelled);
  return {
    question: `What colour is the ${target.shape} labelled "${target.text}"? Answer with one colour name.`,
    query: { family: 'colour_of', shape: target.shape, text: target.text as string },
  };
}

function nextTo(rng: Rng, objects: SearchObject[]): AskedSearch {
  for (const anchor of rng.sample(objects.map((_, i) => i), Math.min(objects.length, 12))) {
    for (const direction of rng.shuffle(DIRECTIONS)) {
      let next: number | null;
      try {
        next = neighbourOf(objects, anchor, direction);
      } catch (err) {
        if (err instanceof IllPosedQuestion) continue;
        throw err;
      }
      if (next === null || (objects[next] as SearchObject).text === null) continue;
      const a = objects[anchor] as SearchObject;
      recolourOthers(rng, objects, a.colour, a.shape, new Set([anchor]));
      return { question: neighbourQuestion(a, direction), query: { family: 'next_to', colour: a.colour, shape: a.shape, direction } };
    }
  }
  throw new IllPosedQuestion('no object has a labelled neighbour clearly in line with it');
}

function neighbourQuestion(a: SearchObject, direction: Direction): string {
  const name = `the ${a.colour} ${a.shape}`;
  if (direction === 'left' || direction === 'right') {
    return `Among the objects level with ${name} (their centres within its height), which is the nearest to its ${direction}? Answer with the text written on it.`;
  }
  return `Among the objects in line with ${name} (their centres within its width), which is the nearest ${direction} it? Answer with the text written on it.`;
}

/**
 * k objects (2–5) near one another made the same colour and shape, every other of that colour and
 * shape recoloured, and the two nearest others given that colour in another shape: the colour,
 * which the whole image shows, never gives the count away.
 */
function howMany(rng: Rng, objects: SearchObject[], fontSize: number): AskedSearch {
  const seed = rng.int(0, objects.length - 1);
  const s = objects[seed] as SearchObject;
  const centre = (o: SearchObject) => [(o.bbox.x1 + o.bbox.x2) / 2, (o.bbox.y1 + o.bbox.y2) / 2] as const;
  const [sx, sy] = centre(s);
  const byDistance = objects.map((o, i) => ({ i, d: Math.hypot(centre(o)[0] - sx, centre(o)[1] - sy) })).sort((p, q) => p.d - q.d || p.i - q.i).map((e) => e.i);
  const k = rng.int(2, 5);
  if (objects.length < k + 2) throw new IllPosedQuestion('too few objects to count among');
  const counted = new Set(byDistance.slice(0, k));
  for (const i of counted) {
    const o = objects[i] as SearchObject;
    o.colour = s.colour;
    if (o.shape !== s.shape) {
      o.shape = s.shape;
      if (!labelFits(o, fontSize)) o.text = null;
    }
  }
  recolourOthers(rng, objects, s.colour, s.shape, counted);
  for (const i of byDistance.slice(k, k + 2)) {
    const o = objects[i] as SearchObject;
    o.colour = s.colour;
    if (o.shape === s.shape) reshape(rng, o, s.shape, fontSize);
  }
  return { question: `How many ${s.colour} ${s.shape}s are there in the image? Answer with a number.`, query: { family: 'how_many', colour: s.colour, shape: s.shape } };
}

/** Asks a question of `family` about the objects (which it may recolour, reshape or unlabel). */
export function askSearch(rng: Rng, family: SearchFamily, objects: SearchObject[], fontSize: number): AskedSearch {
  switch (family) {
    case 'text_on':
      return textOn(rng, objects);
    case 'colour_of':
      return colourOf(rng, objects);
    case 'next_to':
      return nextTo(rng, objects);
    case 'how_many':
      return howMany(rng, objects, fontSize);
  }
}
