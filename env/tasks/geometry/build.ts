/**
 * One geometry task from its random stream: the question's points (questions.ts), distractor
 * points and constructions, a letter for every point (layout.ts), the scene, and the structured
 * query the checker recomputes the answer from. Pure: the same stream gives the same task.
 */
import type { PointXY } from '../../tools/metadata.js';
import type { ToolCall } from '../../tools/types.js';
import { MIN_FONT_SIZE, type Difficulty } from '../difficulty.js';
import { LayoutError } from '../layout-error.js';
import type { Rng } from '../prng.js';
import { IllPosedQuestion } from '../ill-posed.js';
import type { TaskQuery } from '../record.js';
import type { Scene } from '../scene.js';
import { addDistractors, addPoints, diagramScene, placeLabels, POINT_LETTERS, type Diagram } from './layout.js';
import { distance } from './plane.js';
import { DIAGRAM_PROFILES, DOT_RADIUS, locateTolerance, ROBUST_MARGIN_PX } from './profiles.js';
import { DEFAULT_GEOMETRY_FAMILIES, placeQuestion, type Area, type GeometryFamily, type PlacedQuestion } from './questions.js';

function apart(points: readonly PointXY[], separation: number): boolean {
  return points.every((p, i) => points.slice(i + 1).every((q) => distance(p, q) >= separation));
}

export interface GeometrySpec {
  difficulty: Difficulty;
  imageSize: [number, number] | null;
  families?: readonly GeometryFamily[];
  /** `--labels`: the point names to draw from (absent: the letters A–Z without I and O). */
  letters?: readonly string[];
}

export interface BuiltDiagram {
  scene: Scene;
  question: string;
  answer: string;
  family: GeometryFamily;
  query: TaskQuery;
  gold: ToolCall[];
}

const INKS = ['#1f3b73', '#2f2f2f', '#22543d', '#4a2f6b'];

/** The letters' size on a canvas: the difficulty's, smaller on small canvases (a tenth of the short side), never below 9 px. */
export function diagramFontSize(difficulty: Difficulty, width: number, height: number): number {
  return Math.max(MIN_FONT_SIZE + 2, Math.min(DIAGRAM_PROFILES[difficulty].fontSize, Math.floor(Math.min(width, height) / 10)));
}

export function buildDiagram(rng: Rng, spec: GeometrySpec): BuiltDiagram {
  const profile = DIAGRAM_PROFILES[spec.difficulty];
  const [width, height] = spec.imageSize ?? [profile.canvas[0], profile.canvas[1]];
  const fontSize = diagramFontSize(spec.difficulty, width, height);
  // Room for a letter on every side of any point.
  const pad = Math.ceil(fontSize * 1.6) + DOT_RADIUS;
  const area: Area = { x1: pad, y1: pad, x2: width - pad, y2: height - pad };
  if (area.x2 - area.x1 < 60 || area.y2 - area.y1 < 40) {
    throw new LayoutError(`a ${width}×${height} canvas leaves no room for a diagram at ${fontSize} px letters; use an --image-size of at least ${2 * pad + 60}x${2 * pad + 40}`);
  }
  const family = rng.pick(spec.families ?? DEFAULT_GEOMETRY_FAMILIES);
  const tolerance = locateTolerance(width, height);
  const separation = Math.max(22, 2.6 * fontSize, family === 'locate' ? 3 * tolerance : 0);

  // A roll whose points crowd each other is re-placed here (cheap: no pixels yet), up to 8 times.
  let placed: PlacedQuestion | null = null;
  let why = '';
  for (let k = 0; k < 8 && placed === null; k++) {
    try {
      const candidate = placeQuestion(rng.fork(`question/${k}`), family, area, profile.margin, tolerance, profile.margin[0]);
      if (candidate.margin < ROBUST_MARGIN_PX) why = `the answer's margin ${candidate.margin.toFixed(2)} px is below ${ROBUST_MARGIN_PX}`;
      else if (!apart(candidate.roles, separation)) why = 'two of the question\'s points are too close to tell apart';
      else placed = candidate;
    } catch (err) {
      if (!(err instanceof IllPosedQuestion)) throw err;
      why = err.message;
    }
  }
  if (placed === null) throw new IllPosedQuestion(why);
  const roles = placed.roles;
  const total = Math.max(roles.length, rng.int(profile.points[0], profile.points[1]));
  const extra = addPoints(rng.fork('points'), area, roles, total - roles.length, separation);
  const pool = spec.letters ?? POINT_LETTERS;
  if (pool.length < total) throw new IllPosedQuestion(`--labels gives ${pool.length} point names; this diagram needs ${total}`);
  const letters = rng.sample(pool, total);
  const roleLabels = letters.slice(0, roles.length);
  const freeLabels = letters.slice(roles.length);
  // Points are stored in letter order, so the record's order says nothing about roles.
  const all = [...roles, ...extra].map((p, i) => [letters[i] as string, p] as const).sort((a, b) => (a[0] < b[0] ? -1 : 1));
  const diagram: Diagram = { points: Object.fromEntries(all), segments: [], circles: [], polygons: [] };
  addDistractors(rng.fork('distractors'), diagram, freeLabels, rng.int(profile.distractors[0], profile.distractors[1]), area, DOT_RADIUS + 5);
  const labels = placeLabels(rng.fork('letters'), diagram, fontSize, width, height);
  const scene = diagramScene(diagram, labels, width, height, { ink: rng.pick(INKS), dots: '#111111', text: '#111111' });
  const query: TaskQuery = { family, points: roleLabels, ...(placed.tolerance !== undefined ? { tolerance_px: placed.tolerance } : {}) };
  return { scene, question: placed.question(roleLabels), answer: placed.answer(roleLabels), family, query, gold: placed.gold(roleLabels) };
}
