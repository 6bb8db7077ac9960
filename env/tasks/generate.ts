/**
 * One synthetic task from its spec (seed, split, index, attempt, kind, difficulty, canvas):
 * data → layout (a Scene with exact metadata) → question and answer → gold calls → record.
 * A pure function of the spec: the same spec gives the same record and the same pixels, which
 * is what lets `vistool data check` regenerate a stored task and compare byte for byte.
 */
import { encodePng, type RgbImage } from '../core/image.js';
import { layoutCategoryChart, type ChartColours } from './category-chart-layout.js';
import { recordCell, type DataTable } from './data-table.js';
import { CHART_PROFILES, TABLE_PROFILES, TABLE_STYLES, type Difficulty } from './difficulty.js';
import { goldCalls } from './gold.js';
import { layoutHBarChart } from './hbar-layout.js';
import { renderWithLabelMap, type LabelMap } from './label-map.js';
import type { LabelLength } from './labels.js';
import { makeChartData, makeTableData } from './make-data.js';
import { taskStream, type Rng, type Split } from './prng.js';
import { askQuestion, type AskedQuestion } from './questions.js';
import type { GeneratedKind, TaskRecord } from './record.js';
import type { Scene } from './scene.js';
import { layoutTable } from './table-layout.js';
import { CHART_MEASURES, PALETTES } from './vocabulary.js';

/** Bump when a change to the generator changes its output for the same spec. */
export const GENERATOR_VERSION = 2;

export const GENERATED_KINDS: readonly GeneratedKind[] = ['table', 'vbar', 'hbar', 'grouped', 'line'];

export interface TaskSpec {
  seed: number;
  split: Split;
  index: number;
  attempt: number;
  kind: GeneratedKind;
  difficulty: Difficulty;
  /** Forced canvas [width, height], or null for the difficulty's default. */
  imageSize: [number, number] | null;
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

function buildTable(rng: Rng, spec: TaskSpec): { scene: Scene; data: DataTable; asked: AskedQuestion } {
  const profile = TABLE_PROFILES[spec.difficulty];
  const rows = rng.int(profile.rows[0], profile.rows[1]);
  const columns = rng.int(profile.columns[0], profile.columns[1]);
  const size = spec.imageSize;
  const maxChars = size ? clamp(Math.floor((size[0] - 8) / columns / 5.6) - 1, 3, 40) : 40;
  const data = makeTableData(rng.fork('data'), {
    rows,
    columns,
    labels: { length: labelLength(rng, profile.labelLengths, size), similar: rng.chance(profile.similarLabels), maxChars },
    grouping: profile.grouping,
    shortHeaders: size !== null && size[0] / columns < 80,
  });
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
  const asked = askQuestion(rng.fork('question'), { kind: 'table', data, exact: true });
  return { scene, data, asked };
}

function buildChart(rng: Rng, spec: TaskSpec): { scene: Scene; data: DataTable; asked: AskedQuestion } {
  const profile = CHART_PROFILES[spec.difficulty];
  const kind = spec.kind;
  if (kind === 'table') throw new Error('buildChart called for a table');
  const size = spec.imageSize ?? [profile.canvas[0], profile.canvas[1]];
  const categories = rng.int(profile.categories[0], profile.categories[1]);
  const series = kind === 'grouped' ? rng.int(profile.series[0], profile.series[1]) : kind === 'line' && spec.difficulty >= 3 ? rng.int(1, profile.series[1]) : 1;
  const measure = rng.pick(CHART_MEASURES);
  // Labels short enough to fit: flat in their slot on tiny canvases, rotated in a third of the height otherwise.
  const maxChars = kind === 'hbar'
    ? clamp(Math.floor((size[0] * 0.35) / 5.6), 3, 30)
    : isTiny(spec.imageSize) ? clamp(Math.floor((size[0] * 0.8) / categories / 5.6), 3, 30) : clamp(Math.floor(Math.min(size[1] * 0.3, 200) / 5.6), 3, 30);
  const chart = makeChartData(rng.fork('data'), {
    categories,
    series,
    measure,
    timeAxis: kind === 'line' ? 0.8 : 0,
    labels: { length: labelLength(rng, profile.labelLengths, spec.imageSize), similar: rng.chance(profile.similarLabels), maxChars },
  });
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
  const laid = kind === 'hbar' ? layoutHBarChart(common) : layoutCategoryChart({ ...common, kind, preferRotated: rng.chance(profile.rotate) });
  const asked = askQuestion(rng.fork('question'), { kind, data: chart.table, chart: { noun: measure.noun, pool: chart.pool }, exact: laid.valueLabels });
  return { scene: laid.scene, data: chart.table, asked };
}

/** Builds the record and the scene (no pixels yet). Throws LayoutError / IllPosedQuestion when the spec cannot be drawn or asked. */
export function buildTask(spec: TaskSpec): BuiltTask {
  // Forked by kind and difficulty, so a vbar and a line data set from one seed do not share data.
  const rng = taskStream(spec.seed, spec.split, spec.index, spec.attempt).fork(`${spec.kind}/${spec.difficulty}`);
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
    generator: {
      version: GENERATOR_VERSION,
      seed: spec.seed,
      split: spec.split,
      index: spec.index,
      attempt: spec.attempt,
      kind: spec.kind,
      difficulty: spec.difficulty,
      image_size: spec.imageSize,
    },
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
  return { ...task, image, labelMap, png: await encodePng(image) };
}

/** The spec a stored record was generated from, or null if it is not a generated task. */
export function specOf(record: TaskRecord): TaskSpec | null {
  const g = record.generator;
  if (!g) return null;
  return { seed: g.seed, split: g.split, index: g.index, attempt: g.attempt, kind: g.kind, difficulty: g.difficulty as Difficulty, imageSize: g.image_size };
}
