/**
 * One search task from its random stream: objects on a textured background (layout.ts), a
 * question about one of them or a few (questions.ts), the answer from the scene's description
 * (answer.ts), the gold zoom around the objects the question needs, and the need-for-zoom verdict
 * (zoom-need.ts), which a task must pass to be made. Pure: the same stream gives the same task.
 */
import type { ToolCall } from '../../tools/types.js';
import type { Difficulty } from '../difficulty.js';
import { IllPosedQuestion } from '../ill-posed.js';
import { LayoutError } from '../layout-error.js';
import type { Rng } from '../prng.js';
import type { TaskQuery } from '../record.js';
import type { Scene } from '../scene.js';
import { answerInQuestion, searchAnswer, searchTargets } from './answer.js';
import { SEARCH_FAMILIES, type SearchFamily } from './families.js';
import { budgetScale, capHeight, type ZoomBudget } from './legibility.js';
import { backgroundLayers, placeObjects, unionBox } from './layout.js';
import { objectMark } from './objects.js';
import { DEFAULT_SEARCH_SIZE, SEARCH_PROFILES } from './profiles.js';
import { askSearch } from './questions.js';
import { zoomNeed } from './zoom-need.js';

/**
 * The gold zoom's factor for a crop: enlarged until it fills the policy's budget (√(max_pixels /
 * crop area), to 2 decimals), between 1 and 4, the zoom tool's range. A crop larger than the budget
 * gains nothing from enlarging (the view is scaled back down), and the tool then returns the crop itself.
 */
export function goldFactor(crop: readonly number[], maxPixels: number): number {
  const area = ((crop[2] as number) - (crop[0] as number)) * ((crop[3] as number) - (crop[1] as number));
  return Math.min(4, Math.max(1, Math.floor(Math.sqrt(maxPixels / area) * 100) / 100));
}

export interface SearchSpec {
  difficulty: Difficulty;
  imageSize: [number, number] | null;
  families?: readonly SearchFamily[];
  budget: ZoomBudget;
}

export interface BuiltSearch {
  scene: Scene;
  question: string;
  answer: string;
  family: SearchFamily;
  query: TaskQuery;
  gold: ToolCall[];
}

/**
 * Why a canvas cannot make search tasks at these difficulties under the budget (its labels would
 * be legible without a zoom), or null. `data gen` calls it before generating anything.
 */
export function searchSizeProblem(imageSize: [number, number] | null, difficulty: readonly [Difficulty, Difficulty], budget: ZoomBudget): string | null {
  const [w, h] = imageSize ?? DEFAULT_SEARCH_SIZE;
  const scale = budgetScale(w, h, budget.maxPixels);
  for (let d = difficulty[0]; d <= difficulty[1]; d++) {
    const font = SEARCH_PROFILES[d as Difficulty].fontSize;
    const seen = capHeight(font) * scale;
    if (seen >= budget.legiblePx) {
      return `at ${w}×${h} a difficulty-${d} label (${font} px, cap height ${capHeight(font).toFixed(1)} px) is seen ${seen.toFixed(1)} px tall within ${budget.maxPixels} pixels, legible without a zoom (< ${budget.legiblePx} px needed); use a larger --image-size`;
    }
  }
  return null;
}

export function buildSearch(rng: Rng, spec: SearchSpec): BuiltSearch {
  const profile = SEARCH_PROFILES[spec.difficulty];
  const [width, height] = spec.imageSize ?? DEFAULT_SEARCH_SIZE;
  const objects = placeObjects(rng.fork('objects'), width, height, profile);
  const family = rng.pick(spec.families ?? SEARCH_FAMILIES);
  const asked = askSearch(rng.fork('question'), family, objects, profile.fontSize);
  const targets = searchTargets(objects, asked.query);
  const answer = searchAnswer(objects, asked.query);
  if (answerInQuestion(asked.question, answer)) throw new IllPosedQuestion(`the answer "${answer}" appears in the question`);
  const target = unionBox(targets.map((i) => objects[i]!.bbox));
  const pad = profile.side[1];
  const crop = [Math.max(0, target.x1 - pad), Math.max(0, target.y1 - pad), Math.min(width, target.x2 + pad), Math.min(height, target.y2 + pad)];
  const factor = goldFactor(crop, spec.budget.maxPixels);
  const verdict = zoomNeed({ width, height, family, objects, targets, fontSize: profile.fontSize, crop, factor }, spec.budget);
  if (!verdict.ok) throw new IllPosedQuestion(`the task does not need the zoom or the zoom does not suffice: ${verdict.atBudget.toFixed(1)} px at the budget, ${verdict.inZoom.toFixed(1)} px in the zoom (legible from ${spec.budget.legiblePx} px)`);
  const marks = objects.map((o, i) => objectMark(o, i, profile.fontSize));
  const background = backgroundLayers(rng.fork('background'), width, height, objects, profile.clutter);
  if (objects.length === 0) throw new LayoutError('a search scene needs objects');
  const scene: Scene = {
    width,
    height,
    background: background.background,
    layers: [...background.layers, ...marks],
    meta: { unit: 'pixels', source: 'generator', label_font_size: profile.fontSize, objects, targets, target_bbox: target },
  };
  return { scene, question: asked.question, answer, family, query: asked.query, gold: [{ name: 'zoom_in', arguments: { bbox: crop, factor } }] };
}
