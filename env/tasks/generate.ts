/**
 * One synthetic task from its spec (seed, split, index, attempt, kind, difficulty, canvas):
 * data → layout (a Scene with exact metadata) → question and answer → gold calls → record.
 * A pure function of the spec: the same spec gives the same record and the same pixels, which
 * is what lets `vistool data check` regenerate a stored task and compare byte for byte.
 */
import type { RgbImage } from '../core/image.js';
import { layoutCategoryChart, type ChartColours } from './category-chart-layout.js';
import { recordCell, type DataTable } from './data-table.js';
import { CHART_PROFILES, DIFFICULTIES as DIFFICULTY_LEVELS, TABLE_PROFILES, TABLE_STYLES, type Difficulty } from './difficulty.js';
import { buildDiagram } from './geometry/build.js';
import { DIAGRAM_PROFILES } from './geometry/profiles.js';
import { DEFAULT_GEOMETRY_FAMILIES, QUESTION_POINTS, type GeometryFamily } from './geometry/questions.js';
import { goldCalls } from './gold.js';
import { layoutHBarChart } from './hbar-layout.js';
import { buildSearch } from './search/build.js';
import type { SearchFamily } from './search/families.js';
import { DEFAULT_LEGIBLE_PX, DEFAULT_MAX_PIXELS } from './search/profiles.js';
import type { LabelMap } from './label-map.js';
import type { LabelLength } from './labels.js';
import { makeChartData, makeTableData } from './make-data.js';
import { renderWithLabelMap } from './paint.js';
import { taskStream, type Rng, type Split } from './prng.js';
import { askQuestion, DEFAULT_FAMILIES, leadsBy, type AskedQuestion } from './questions.js';
import type { GeneratedKind, GeneratorProvenance, QuestionFamily, TaskRecord } from './record.js';
import type { Scene } from './scene.js';
import { layoutTable } from './table-layout.js';
import { encodeTaskPng } from './task-png.js';
import { CHART_MEASURES, PALETTES } from './vocabulary.js';

/** Bump when a change to the generator changes its output for the same spec. */
export const GENERATOR_VERSION = 3;

/** The kinds `--kind mixed` draws from (charts and tables; geometry and search are asked for by name). */
export const GENERATED_KINDS: readonly GeneratedKind[] = ['table', 'vbar', 'hbar', 'grouped', 'line'];

/** Every kind `--kind` accepts by name. */
export const NAMED_KINDS: readonly GeneratedKind[] = [...GENERATED_KINDS, 'geometry', 'search'];

export interface TaskSpec {
  seed: number;
  split: Split;
  index: number;
  attempt: number;
  kind: GeneratedKind;
  difficulty: Difficulty;
  /** Forced canvas [width, height], or null for the difficulty's default. */
  imageSize: [number, number] | null;
  /** Ask only questions of these families (absent: any family). */
  families?: readonly QuestionFamily[];
  /** Category labels (chart categories, table row keys), used in this order instead of the vocabulary. */
  labels?: readonly string[];
  /** argmax / argmin: the extreme value leads the runner-up by at least this fraction of the larger of the two. */
  minTopGap?: number;
  /** Charts: draw the number of categories from this inclusive range instead of the difficulty's. */
  categories?: readonly [number, number];
  /** With `labels`: each chart shows a random selection of them in a random order. */
  shuffleLabels?: boolean;
  /** Search: the policy's image budget the need-for-zoom criterion assumes (absent: DEFAULT_MAX_PIXELS). */
  maxPixels?: number;
  /** Search: the legible feature size of that criterion, px (absent: DEFAULT_LEGIBLE_PX). */
  legiblePx?: number;
}

/** A generator option that can never work for this spec (not a bad roll): no re-roll will help. */
export class GeneratorOptionError extends Error {
  override name = 'GeneratorOptionError';
}

export interface BuiltTask {
  record: TaskRecord;
  scene: Scene;
}

export function taskId(spec: Pick<TaskSpec, 'split' | 'kind' | 'index'>): string {
  return `${spec.split}-${spec.kind}-${String(spec.index).padStart(6, '0')}`;
}

function isTiny(size: [number, number] | null): boolean {
  return size !== null && (size[0] < 260 || size[1] < 200);
}

function labelLength(rng: Rng, options: readonly LabelLength[], size: [number, number] | null): LabelLength {
  return isTiny(size) ? 'short' : rng.pick(options);
}

function clamp(value: number, lo: number, hi: number): number {
  return Math.max(lo, Math.min(hi, value));
}

/** Characters a table key may have on a forced canvas with `columns` columns (the vocabulary's own cap). */
function tableLabelChars(size: [number, number] | null, columns: number): number {
  return size ? clamp(Math.floor((size[0] - 8) / columns / 5.6) - 1, 3, 40) : 40;
}

/** Characters a chart's category label may have: flat in its slot on tiny canvases, rotated in a third of the height otherwise. */
function chartLabelChars(kind: GeneratedKind, imageSize: [number, number] | null, size: [number, number], categories: number): number {
  if (kind === 'hbar') return clamp(Math.floor((size[0] * 0.35) / 5.6), 3, 30);
  return isTiny(imageSize) ? clamp(Math.floor((size[0] * 0.8) / categories / 5.6), 3, 30) : clamp(Math.floor(Math.min(size[1] * 0.3, 200) / 5.6), 3, 30);
}

/**
 * Why `--labels` cannot serve tasks of this kind and difficulty range on this canvas (too few
 * labels for the most categories or rows a task may draw, a label wider than its slot, a
 * repeat), or null when it can. The data gen command calls it before generating anything.
 */
export function labelsProblem(labels: readonly string[], kind: GeneratedKind, difficulty: [Difficulty, Difficulty], imageSize: [number, number] | null,
  options: { categories?: readonly [number, number]; shuffle?: boolean; families?: readonly string[] } = {}): string | null {
  const seen = new Set<string>();
  for (const label of labels) {
    if (label.trim() === '' || label !== label.trim()) return `--labels has an empty label or one with spaces at its ends ('${label}'); write them as A,B,C`;
    if (seen.has(label)) return `--labels repeats '${label}': labels name the bands, so each must be unique`;
    seen.add(label);
  }
  if (kind === 'geometry') return diagramLabelsProblem(labels, difficulty, options.families);
  for (let d = difficulty[0]; d <= difficulty[1]; d++) {
    const level = d as Difficulty;
    const needed = kind === 'table' ? TABLE_PROFILES[level].rows[1] : categoryRange({ difficulty: level, ...(options.categories ? { categories: options.categories } : {}) })[1];
    const what = kind === 'table' ? 'rows' : 'categories';
    const fewer = kind !== 'table' && options.categories ? 'fewer --categories' : 'lower --difficulty';
    if (labels.length < needed) return `--labels gives ${labels.length} labels but a difficulty-${d} ${kind} may need ${needed} ${what}; give at least ${needed} or ${fewer}`;
    const cap = kind === 'table'
      ? tableLabelChars(imageSize, TABLE_PROFILES[level].columns[1])
      : chartLabelChars(kind, imageSize, imageSize ?? [CHART_PROFILES[level].canvas[0], CHART_PROFILES[level].canvas[1]], needed);
    // Shuffled labels may all appear, each in any slot.
    const wide = (options.shuffle ? labels : labels.slice(0, needed)).find((l) => l.length > cap);
    const canvas = imageSize ? `${imageSize[0]}x${imageSize[1]}` : 'the default canvas';
    if (wide !== undefined) return `--labels '${wide}' is ${wide.length} characters; a difficulty-${d} ${kind} on ${canvas} fits at most ${cap} per label. Use shorter labels or a larger --image-size`;
  }
  return null;
}

/** Point names for diagrams: enough for the most points the difficulty range and families draw, each at most 3 characters. */
function diagramLabelsProblem(labels: readonly string[], difficulty: [Difficulty, Difficulty], families: readonly string[] | undefined): string | null {
  const asked = (families ?? DEFAULT_GEOMETRY_FAMILIES) as readonly GeometryFamily[];
  const roles = Math.max(...asked.map((f) => QUESTION_POINTS[f]));
  const needed = Math.max(roles, ...DIFFICULTY_LEVELS.filter((d) => d >= difficulty[0] && d <= difficulty[1]).map((d) => DIAGRAM_PROFILES[d].points[1]));
  const long = labels.find((l) => l.length > 3);
  if (long !== undefined) return `--labels '${long}' is ${long.length} characters; a diagram's point names are at most 3 (e.g. A,B,C)`;
  if (labels.length < needed) return `--labels gives ${labels.length} point names but a diagram at difficulty ${difficulty[0]}–${difficulty[1]}${families ? ` asking ${asked.join(', ')}` : ''} may need ${needed}; give at least ${needed}`;
  return null;
}

/**
 * The first `count` of the given labels, or null to draw them from the vocabulary. Shuffled, a
 * random `count` of them in a random order (from their own stream, so nothing else moves): a
 * label then says nothing about its place, and only reading the chart finds it.
 */
function givenLabels(rng: Rng, spec: TaskSpec, count: number): string[] | null {
  if (!spec.labels) return null;
  if (spec.labels.length < count) throw new GeneratorOptionError(`--labels gives ${spec.labels.length} labels; this task needs ${count}`);
  return spec.shuffleLabels ? rng.fork('labels').sample(spec.labels, count) : spec.labels.slice(0, count);
}

/** The chart's category count range: `--categories` when given, else the difficulty's. */
export function categoryRange(spec: Pick<TaskSpec, 'categories' | 'difficulty'>): readonly [number, number] {
  return spec.categories ?? CHART_PROFILES[spec.difficulty].categories;
}

/** Whether this spec asks level questions about a chart, whose data is then level data (make-data.ts). */
function levelData(spec: TaskSpec): boolean {
  return spec.kind !== 'table' && (spec.families?.includes('level') ?? false);
}

/** Whether every number column's extremes lead their runners-up by `gap` (for the families asked about). */
function extremesApart(data: DataTable, gap: number, families: readonly QuestionFamily[]): boolean {
  const wantMax = families.includes('argmax');
  const wantMin = families.includes('argmin');
  return data.columns.every((column, c) => {
    if (column.kind !== 'number') return true;
    const values = data.rows.map((row) => row[c] as number).sort((a, b) => b - a);
    return values.length >= 2 && (!wantMax || leadsBy(values[0] as number, values[1] as number, gap)) && (!wantMin || leadsBy(values[values.length - 1] as number, values[values.length - 2] as number, gap));
  });
}

/**
 * Draws data from `first` (forked as 'data' before the stream moves on, as it always was); with a
 * minimum gap, redraws from the streams `data/1`, `data/2`, … until the extremes are far enough
 * apart (cheap: no pixels yet), so the gap costs no dropped tasks.
 */
function drawData<T>(rng: Rng, first: Rng, spec: TaskSpec, make: (rng: Rng) => T, table: (made: T) => DataTable): T {
  const drawn = make(first);
  if (!spec.minTopGap) return drawn;
  const families = spec.families ?? DEFAULT_FAMILIES;
  let made = drawn;
  for (let k = 1; k <= 64 && !extremesApart(table(made), spec.minTopGap, families); k++) made = make(rng.fork(`data/${k}`));
  return made;
}

function buildTable(rng: Rng, spec: TaskSpec): { scene: Scene; data: DataTable; asked: AskedQuestion } {
  const profile = TABLE_PROFILES[spec.difficulty];
  const rows = rng.int(profile.rows[0], profile.rows[1]);
  const columns = rng.int(profile.columns[0], profile.columns[1]);
  const size = spec.imageSize;
  const maxChars = tableLabelChars(size, columns);
  const dataRng = rng.fork('data');
  const options = {
    rows,
    columns,
    labels: { length: labelLength(rng, profile.labelLengths, size), similar: rng.chance(profile.similarLabels), maxChars },
    grouping: profile.grouping,
    shortHeaders: size !== null && size[0] / columns < 80,
  };
  const keys = givenLabels(rng, spec, rows);
  const data = drawData(rng, dataRng, spec, (r) => makeTableData(r, keys ? { ...options, keys } : options), (d) => d);
  const style = rng.pick(profile.styles.filter((s) => TABLE_STYLES.includes(s)));
  const dark = rng.pick(['#2f4b7c', '#3b5d3a', '#44475a', '#5b3f7a']);
  const scene = layoutTable({
    data,
    style,
    fontSize: profile.fontSize,
    title: !isTiny(size) && rng.chance(profile.title) ? data.title : null,
    canvas: size ? { width: size[0], height: size[1] } : null,
    colours: {
      text: '#222222',
      line: rng.pick(['#808080', '#999999', '#666666']),
      headerFill: style === 'header' ? dark : rng.pick(['#e8e8e8', '#dde6f0', '#e6efe2']),
      headerText: '#ffffff',
      groupFill: rng.pick(['#d6deeb', '#dfe8d5', '#e4e4e4']),
      stripe: rng.pick(['#eef2f7', '#f2f2f2', '#edf5ec']),
    },
  });
  const asked = askQuestion(rng.fork('question'), { kind: 'table', data, exact: true, ...questionOptions(spec) }, spec.families);
  return { scene, data, asked };
}

function buildChart(rng: Rng, spec: TaskSpec): { scene: Scene; data: DataTable; asked: AskedQuestion } {
  const profile = CHART_PROFILES[spec.difficulty];
  const kind = spec.kind;
  if (kind === 'table') throw new Error('buildChart called for a table');
  const size = spec.imageSize ?? [profile.canvas[0], profile.canvas[1]];
  const [fewest, most] = categoryRange(spec);
  const categories = rng.int(fewest, most);
  const series = kind === 'grouped' ? rng.int(profile.series[0], profile.series[1]) : kind === 'line' && spec.difficulty >= 3 ? rng.int(1, profile.series[1]) : 1;
  const measure = rng.pick(CHART_MEASURES);
  const maxChars = chartLabelChars(kind, spec.imageSize, size, categories);
  const dataRng = rng.fork('data');
  const options = {
    categories,
    series,
    measure,
    timeAxis: kind === 'line' ? 0.8 : 0,
    labels: { length: labelLength(rng, profile.labelLengths, spec.imageSize), similar: rng.chance(profile.similarLabels), maxChars },
    ...(levelData(spec) ? { levels: true } : {}),
  };
  const given = givenLabels(rng, spec, categories);
  const chart = drawData(rng, dataRng, spec, (r) => makeChartData(r, given ? { ...options, given } : options), (c) => c.table);
  const palette = rng.pick(PALETTES);
  const colours: ChartColours = {
    text: '#222222',
    axis: '#444444',
    grid: '#e3e3e3',
    series: series > 1 ? palette : rng.chance(profile.colourful) ? rng.shuffle(palette) : [rng.pick(palette)],
    perBar: series === 1 && rng.chance(profile.colourful),
  };
  const title = rng.chance(0.75) ? `${measure.axis.replace(/ \(.*\)$/, '')} by ${chart.pool.one}` : null;
  const common = {
    data: chart.table,
    canvas: { width: size[0], height: size[1] },
    fontSize: profile.fontSize,
    title,
    valueAxisTitle: rng.chance(0.6) ? measure.axis : null,
    categoryAxisTitle: rng.chance(0.4) ? chart.pool.axis : null,
    valueLabels: rng.chance(profile.valueLabels),
    gridLines: rng.chance(profile.gridLines),
    barFraction: 0.5 + 0.25 * rng.next(),
    colours,
  };
  if (kind === 'geometry' || kind === 'search') throw new Error(`buildChart called for kind ${kind}`);
  const laid = kind === 'hbar' ? layoutHBarChart(common) : layoutCategoryChart({ ...common, kind, preferRotated: rng.chance(profile.rotate) });
  const asked = askQuestion(rng.fork('question'), { kind, data: chart.table, chart: { noun: measure.noun, pool: chart.pool }, exact: laid.valueLabels, ...questionOptions(spec) }, spec.families);
  return { scene: laid.scene, data: chart.table, asked };
}

function questionOptions(spec: TaskSpec): { minTopGap?: number } {
  return spec.minTopGap ? { minTopGap: spec.minTopGap } : {};
}

/** The provenance of a spec; the new options appear only when used, so older outputs stay byte-identical. */
function provenance(spec: TaskSpec): GeneratorProvenance {
  return {
    version: GENERATOR_VERSION,
    seed: spec.seed,
    split: spec.split,
    index: spec.index,
    attempt: spec.attempt,
    kind: spec.kind,
    difficulty: spec.difficulty,
    image_size: spec.imageSize,
    ...(spec.families ? { families: [...spec.families] } : {}),
    ...(spec.labels ? { labels: [...spec.labels] } : {}),
    ...(spec.minTopGap ? { min_top_gap: spec.minTopGap } : {}),
    ...(spec.categories ? { categories: [spec.categories[0], spec.categories[1]] as [number, number] } : {}),
    ...(spec.shuffleLabels ? { shuffle_labels: true } : {}),
    ...(spec.maxPixels !== undefined ? { max_pixels: spec.maxPixels } : {}),
    ...(spec.legiblePx !== undefined ? { legible_px: spec.legiblePx } : {}),
  };
}

/** A geometry diagram's record: no table; the answer comes from `meta.points` and `query`. */
function buildGeometryTask(rng: Rng, spec: TaskSpec): BuiltTask {
  if (spec.minTopGap || spec.categories || spec.shuffleLabels) {
    throw new GeneratorOptionError('--min-top-gap, --categories and --shuffle-labels are for charts and tables; geometry diagrams take --difficulty, --image-size, --family and --labels');
  }
  const built = buildDiagram(rng, {
    difficulty: spec.difficulty,
    imageSize: spec.imageSize,
    ...(spec.families ? { families: spec.families as readonly string[] as GeometryFamily[] } : {}),
    ...(spec.labels ? { letters: spec.labels } : {}),
  });
  return sceneTask(spec, 'geometry', built);
}

/** The record of a task drawn from a scene of its own (geometry, search): no table; meta, gold and query come from the builder. */
function sceneTask(spec: TaskSpec, kind: 'geometry' | 'search',
  built: { question: string; answer: TaskRecord['answer']; family: string; scene: Scene; gold: TaskRecord['gold']; query: TaskRecord['query'] }): BuiltTask {
  const id = taskId(spec);
  const record: TaskRecord = {
    id,
    image: `images/${id}.png`,
    question: built.question,
    answer: built.answer,
    kind,
    difficulty: spec.difficulty,
    family: built.family,
    source: 'synthetic',
    meta: built.scene.meta,
    gold: built.gold,
    query: built.query,
    generator: provenance(spec),
  };
  return { record, scene: built.scene };
}

/** A search scene's record: no table; the answer comes from `meta.objects` and `query`. */
function buildSearchTask(rng: Rng, spec: TaskSpec): BuiltTask {
  if (spec.minTopGap || spec.categories || spec.shuffleLabels || spec.labels) {
    throw new GeneratorOptionError('--labels, --min-top-gap, --categories and --shuffle-labels are for charts, tables and diagrams; search scenes take --difficulty, --image-size, --family, --max-pixels and --legible-px');
  }
  const built = buildSearch(rng, {
    difficulty: spec.difficulty,
    imageSize: spec.imageSize,
    ...(spec.families ? { families: spec.families as readonly string[] as SearchFamily[] } : {}),
    budget: { maxPixels: spec.maxPixels ?? DEFAULT_MAX_PIXELS, legiblePx: spec.legiblePx ?? DEFAULT_LEGIBLE_PX },
  });
  return sceneTask(spec, 'search', built);
}

/** Builds the record and the scene (no pixels yet). Throws LayoutError / IllPosedQuestion when the spec cannot be drawn or asked. */
export function buildTask(spec: TaskSpec): BuiltTask {
  // Forked by kind and difficulty, so a vbar and a line data set from one seed do not share data.
  const rng = taskStream(spec.seed, spec.split, spec.index, spec.attempt).fork(`${spec.kind}/${spec.difficulty}`);
  if (spec.kind === 'geometry') return buildGeometryTask(rng, spec);
  if (spec.kind === 'search') return buildSearchTask(rng, spec);
  const { scene, data, asked } = spec.kind === 'table' ? buildTable(rng, spec) : buildChart(rng, spec);
  const id = taskId(spec);
  const record: TaskRecord = {
    id,
    image: `images/${id}.png`,
    question: asked.question,
    answer: asked.answer,
    kind: spec.kind,
    difficulty: spec.difficulty,
    family: asked.family,
    source: 'synthetic',
    meta: scene.meta,
    table: { columns: data.columns.map((c) => c.name), rows: data.rows.map((row, r) => row.map((_, c) => recordCell(data, r, c))) },
    gold: goldCalls(spec.kind, data, asked.query, asked.answer),
    query: asked.query,
    generator: provenance(spec),
  };
  return { record, scene };
}

export interface RenderedTask extends BuiltTask {
  image: RgbImage;
  png: Buffer;
  labelMap: LabelMap;
}

export async function renderTask(task: BuiltTask): Promise<RenderedTask> {
  const { image, labelMap } = await renderWithLabelMap(task.scene);
  return { ...task, image, labelMap, png: await encodeTaskPng(image) };
}

/** The spec a stored record was generated from, or null if it is not a generated task. */
export function specOf(record: TaskRecord): TaskSpec | null {
  const g = record.generator;
  if (!g) return null;
  return {
    seed: g.seed, split: g.split, index: g.index, attempt: g.attempt, kind: g.kind, difficulty: g.difficulty as Difficulty, imageSize: g.image_size,
    ...(g.families ? { families: g.families as QuestionFamily[] } : {}),
    ...(g.labels ? { labels: g.labels } : {}),
    ...(g.min_top_gap ? { minTopGap: g.min_top_gap } : {}),
    ...(g.categories ? { categories: [g.categories[0], g.categories[1]] as const } : {}),
    ...(g.shuffle_labels ? { shuffleLabels: true } : {}),
    ...(g.max_pixels !== undefined ? { maxPixels: g.max_pixels } : {}),
    ...(g.legible_px !== undefined ? { legiblePx: g.legible_px } : {}),
  };
}
