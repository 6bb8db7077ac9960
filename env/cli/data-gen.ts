/**
 * `vistool data gen`: writes a synthetic data set (DIR/tasks.jsonl + DIR/images/*.png) with
 * exact geometry, every task checked on its pixels. Progress goes to stderr (a bar on a
 * terminal, a line every ~10% otherwise); the summary goes to stderr for people and, as one
 * JSON object, to stdout for scripts.
 */
import { defaultConcurrency, generateDataset, type DatasetOptions, type DatasetProgress } from '../tasks/dataset.js';
import { isDifficulty, type Difficulty } from '../tasks/difficulty.js';
import { GENERATED_KINDS, labelsProblem, NAMED_KINDS } from '../tasks/generate.js';
import { searchSizeProblem } from '../tasks/search/build.js';
import { SEARCH_FAMILIES, type SearchFamily } from '../tasks/search/families.js';
import { DEFAULT_LEGIBLE_PX, DEFAULT_MAX_PIXELS, DEFAULT_SEARCH_SIZE } from '../tasks/search/profiles.js';
import { GEOMETRY_FAMILIES, type GeometryFamily } from '../tasks/geometry/questions.js';
import { SPLITS, type Split } from '../tasks/prng.js';
import { FAMILIES } from '../tasks/questions.js';
import type { GeneratedKind, QuestionFamily } from '../tasks/record.js';
import { type CliCommand, parseCommandArgs, UsageError } from './command.js';

const usage = `vistool data gen --kind table|vbar|hbar|grouped|line|mixed|geometry|search --n N --seed S --out DIR
                 [--difficulty D|D1-D2] [--split train|val|test] [--image-size WxH]
                 [--family F1,F2] [--labels A,B,C [--shuffle-labels]] [--min-top-gap G]
                 [--categories N|N1-N2] [--max-pixels P] [--legible-px L]
                 [--concurrency K] [--max-attempts A]

  --kind          what to draw; mixed draws each task's kind at random among the charts and
                  tables; geometry draws diagrams of labelled points, segments, polygons and
                  circles; search draws large scenes of small objects, one of which the
                  question names, that need the zoom (env/tasks/README.md)
  --n             number of tasks
  --seed          0..4294967295; the same seed and options give byte-identical files
  --difficulty    1..5 or a range such as 1-3 (default 1-5)
  --split         train (default), val or test: disjoint seed streams from one seed
  --image-size    force every canvas to WxH pixels (e.g. 224x112); fonts shrink to fit, and
                  a layout that cannot fit legibly is an error naming the size it needs
                  (search: default ${DEFAULT_SEARCH_SIZE[0]}x${DEFAULT_SEARCH_SIZE[1]})
  --family        ask only these question families: ${FAMILIES.join(', ')};
                  geometry: ${GEOMETRY_FAMILIES.join(', ')} (locate, the point-localisation
                  family, only when named); search: ${SEARCH_FAMILIES.join(', ')}
                  (charts without printed values only ever ask argmax, argmin, compare, count, list,
                  level); level ("is D low, medium or high?") is asked of charts only, and only
                  when named: its charts draw every value clearly in one of three levels
  --labels        chart categories (table row keys) taken from this list, in this order,
                  instead of the vocabulary, e.g. A,B,C; there must be enough for the most
                  categories the difficulty draws, each short enough for its slot.
                  geometry: the point names, drawn at random from this list (at most 3
                  characters each; enough for the most points the difficulty draws)
  --shuffle-labels  with --labels: each chart shows a random selection of them in a random
                  order, so a label's place says nothing and only reading the chart finds it
  --categories    charts: draw N categories (or N1 to N2) instead of the difficulty's number
  --min-top-gap   argmax/argmin: the extreme leads the runner-up by at least this fraction of
                  the larger of the two (0..0.9, e.g. 0.2); data is redrawn until it does
  --max-pixels    search: the policy's image budget (area) the need-for-zoom criterion assumes
                  (default ${DEFAULT_MAX_PIXELS}, policy.micro.max_pixels's default)
  --legible-px    search: a feature this many pixels tall in the policy's view is legible
                  (default ${DEFAULT_LEGIBLE_PX}); every task's answer is illegible in the whole image at
                  the budget and legible in its gold zoom
  --concurrency   worker threads making tasks (default: the machine's cores, at least 2);
                  1, or fewer than 100 tasks, makes them on the main thread
  --max-attempts  re-rolls per task before it is dropped (default 4)
  --out DIR       output folder (created; a previous data set there is replaced atomically)`;

export interface CliStreams {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown; isTTY?: boolean };
}

function integer(value: string | undefined, name: string, min: number, max: number): number {
  if (value === undefined) throw new UsageError(`--${name} is required`);
  if (!/^\d+$/.test(value)) throw new UsageError(`--${name} must be a whole number, got '${value}'`);
  const n = Number(value);
  if (n < min || n > max) throw new UsageError(`--${name} must be between ${min} and ${max}, got ${n}`);
  return n;
}

export function parseDifficulty(text: string | undefined): [Difficulty, Difficulty] {
  if (text === undefined) return [1, 5];
  const m = /^(\d)(?:-(\d))?$/.exec(text);
  const lo = m ? Number(m[1]) : NaN;
  const hi = m ? Number(m[2] ?? m[1]) : NaN;
  if (!isDifficulty(lo) || !isDifficulty(hi) || lo > hi) throw new UsageError(`--difficulty must be 1..5 or a range like 2-4, got '${text}'`);
  return [lo, hi];
}

export function parseFamilies(text: string | undefined): QuestionFamily[] | undefined;
export function parseFamilies(text: string | undefined, kind: 'geometry'): GeometryFamily[] | undefined;
export function parseFamilies(text: string | undefined, kind: 'search'): SearchFamily[] | undefined;
export function parseFamilies(text: string | undefined, kind?: string): (QuestionFamily | GeometryFamily | SearchFamily)[] | undefined {
  if (text === undefined) return undefined;
  const allowed: readonly string[] = kind === 'geometry' ? GEOMETRY_FAMILIES : kind === 'search' ? SEARCH_FAMILIES : FAMILIES;
  const names = text.split(',').map((f) => f.trim());
  const unknown = names.filter((f) => !allowed.includes(f));
  if (unknown.length > 0 || names.length === 0) throw new UsageError(`--family${kind === 'geometry' || kind === 'search' ? ` (${kind})` : ''} must be a comma-separated list of ${allowed.join(', ')}; got unknown '${unknown.join(', ')}'`);
  return [...new Set(names)] as QuestionFamily[];
}

export function parseLegiblePx(text: string): number {
  const px = /^\d*\.?\d+$/.test(text) ? Number(text) : NaN;
  if (!(px > 0 && px <= 100)) throw new UsageError(`--legible-px must be a size in pixels above 0 (e.g. 6); got '${text}'`);
  return px;
}

export function parseMinTopGap(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const gap = /^\d*\.?\d+$/.test(text) ? Number(text) : NaN;
  if (!(gap >= 0 && gap <= 0.9)) throw new UsageError(`--min-top-gap must be a fraction between 0 and 0.9 (e.g. 0.2 for a 20% lead); got '${text}'`);
  return gap === 0 ? undefined : gap;
}

export function parseCategories(text: string | undefined): [number, number] | undefined {
  if (text === undefined) return undefined;
  const m = /^(\d+)(?:-(\d+))?$/.exec(text);
  const lo = m ? Number(m[1]) : NaN;
  const hi = m ? Number(m[2] ?? m[1]) : NaN;
  if (!(lo >= 2 && hi <= 40 && lo <= hi)) throw new UsageError(`--categories must be a count 2..40 or a range like 6-8, got '${text}'`);
  return [lo, hi];
}

export function parseImageSize(text: string | undefined): [number, number] | null {
  if (text === undefined) return null;
  const m = /^(\d+)x(\d+)$/i.exec(text);
  const w = m ? Number(m[1]) : NaN;
  const h = m ? Number(m[2]) : NaN;
  if (!m || w < 32 || h < 32 || w > 8192 || h > 8192) throw new UsageError(`--image-size must be WxH with each side 32..8192, e.g. 224x112; got '${text}'`);
  return [w, h];
}

function progressReporter(stderr: CliStreams['stderr'], total: number): (p: DatasetProgress) => void {
  if (stderr.isTTY) {
    return (p) => {
      const width = 30;
      const filled = Math.round((p.done / total) * width);
      stderr.write(`\r[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${p.done}/${total}  repaired ${p.repaired}  dropped ${p.dropped}${p.done === total ? '\n' : ''}`);
    };
  }
  const step = Math.max(1, Math.ceil(total / 10));
  return (p) => {
    if (p.done % step === 0 || p.done === total) stderr.write(`data gen: ${p.done}/${total} (${Math.round((100 * p.done) / total)}%), repaired ${p.repaired}, dropped ${p.dropped}\n`);
  };
}

export function createDataGenCommand(io: CliStreams = { stdout: process.stdout, stderr: process.stderr }): CliCommand {
  return {
    path: ['data', 'gen'],
    summary: 'Generate synthetic chart and table tasks with exact geometry',
    usage,
    async run(argv) {
      const { values } = parseCommandArgs({
        args: argv,
        options: {
          kind: { type: 'string' },
          n: { type: 'string' },
          seed: { type: 'string' },
          difficulty: { type: 'string' },
          split: { type: 'string' },
          'image-size': { type: 'string' },
          concurrency: { type: 'string' },
          'max-attempts': { type: 'string' },
          family: { type: 'string' },
          labels: { type: 'string' },
          'min-top-gap': { type: 'string' },
          categories: { type: 'string' },
          'shuffle-labels': { type: 'boolean' },
          'max-pixels': { type: 'string' },
          'legible-px': { type: 'string' },
          out: { type: 'string' },
        },
        strict: true,
        allowPositionals: false,
      });
      const kind = values.kind;
      if (kind === undefined) throw new UsageError('--kind is required');
      if (kind !== 'mixed' && !NAMED_KINDS.includes(kind as GeneratedKind)) throw new UsageError(`--kind must be one of ${[...GENERATED_KINDS, 'mixed', 'geometry', 'search'].join(', ')}; got '${kind}'`);
      if (kind === 'geometry') {
        const chartOnly = (['min-top-gap', 'categories', 'shuffle-labels'] as const).filter((option) => values[option] !== undefined);
        if (chartOnly.length > 0) throw new UsageError(`--${chartOnly.join(', --')} ${chartOnly.length === 1 ? 'is' : 'are'} for charts and tables; --kind geometry takes --difficulty, --image-size, --family and --labels (the point names)`);
      }
      if (kind === 'search') {
        const others = (['min-top-gap', 'categories', 'shuffle-labels', 'labels'] as const).filter((option) => values[option] !== undefined);
        if (others.length > 0) throw new UsageError(`--${others.join(', --')} ${others.length === 1 ? 'is' : 'are'} not for search scenes; --kind search takes --difficulty, --image-size, --family, --max-pixels and --legible-px`);
      } else {
        const searchOnly = (['max-pixels', 'legible-px'] as const).filter((option) => values[option] !== undefined);
        if (searchOnly.length > 0) throw new UsageError(`--${searchOnly.join(', --')} ${searchOnly.length === 1 ? 'is' : 'are'} for --kind search`);
      }
      const split = values.split ?? 'train';
      if (!SPLITS.includes(split as Split)) throw new UsageError(`--split must be train, val or test; got '${split}'`);
      if (values.out === undefined) throw new UsageError('--out is required');
      const options: DatasetOptions = {
        kind: kind as GeneratedKind | 'mixed',
        n: integer(values.n, 'n', 1, 10_000_000),
        seed: integer(values.seed, 'seed', 0, 4294967295),
        split: split as Split,
        difficulty: parseDifficulty(values.difficulty),
        imageSize: parseImageSize(values['image-size']),
        concurrency: values.concurrency === undefined ? defaultConcurrency() : integer(values.concurrency, 'concurrency', 1, 64),
        maxAttempts: values['max-attempts'] === undefined ? 4 : integer(values['max-attempts'], 'max-attempts', 1, 100),
      };
      const families = kind === 'geometry' || kind === 'search' ? (parseFamilies(values.family, kind as 'geometry') as readonly string[] as QuestionFamily[] | undefined) : parseFamilies(values.family);
      if (families) options.families = families;
      if (kind === 'search') {
        if (values['max-pixels'] !== undefined) options.maxPixels = integer(values['max-pixels'], 'max-pixels', 784, 100_000_000);
        if (values['legible-px'] !== undefined) options.legiblePx = parseLegiblePx(values['legible-px']);
        const problem = searchSizeProblem(options.imageSize, options.difficulty, { maxPixels: options.maxPixels ?? DEFAULT_MAX_PIXELS, legiblePx: options.legiblePx ?? DEFAULT_LEGIBLE_PX });
        if (problem) throw new UsageError(problem);
      }
      if (families?.length === 1 && families[0] === 'level' && kind !== 'vbar' && kind !== 'hbar' && kind !== 'line') {
        throw new UsageError(`--family level is asked of single-series charts only; --kind ${kind} draws ${kind === 'mixed' ? 'tables and grouped bars too' : 'none'}. Use --kind vbar, hbar or line`);
      }
      const categories = parseCategories(values.categories);
      if (categories) {
        if (kind === 'table') throw new UsageError('--categories sets how many categories a chart draws; --kind table has rows, set by --difficulty');
        options.categories = categories;
      }
      if (values['shuffle-labels']) {
        if (values.labels === undefined) throw new UsageError('--shuffle-labels shuffles the labels --labels gives; add --labels A,B,C,...');
        options.shuffleLabels = true;
      }
      const minTopGap = parseMinTopGap(values['min-top-gap']);
      if (minTopGap) options.minTopGap = minTopGap;
      if (values.labels !== undefined) {
        const labels = values.labels.split(',');
        for (const k of kind === 'mixed' ? GENERATED_KINDS : [kind as GeneratedKind]) {
          const problem = labelsProblem(labels, k, options.difficulty, options.imageSize, {
            ...(options.categories ? { categories: options.categories } : {}),
            ...(options.shuffleLabels ? { shuffle: true } : {}),
            ...(options.families ? { families: options.families } : {}),
          });
          if (problem) throw new UsageError(problem);
        }
        options.labels = labels;
      }
      const summary = await generateDataset(values.out, options, progressReporter(io.stderr, options.n));
      io.stderr.write(
        `data gen: ${summary.generated} generated (${summary.repaired} repaired), ${summary.dropped} dropped in ${summary.seconds.toFixed(1)} s — ${summary.tasksPerSecond.toFixed(1)} tasks/s${summary.workers > 0 ? ` on ${summary.workers} worker threads` : ''} → ${summary.out}\n`,
      );
      for (const [reason, count] of Object.entries(summary.failures).sort((a, b) => b[1] - a[1]).slice(0, 5)) io.stderr.write(`  ${count}× ${reason}\n`);
      io.stdout.write(`${JSON.stringify({ out: summary.out, generated: summary.generated, repaired: summary.repaired, dropped: summary.dropped, seconds: Number(summary.seconds.toFixed(3)), tasks_per_second: Number(summary.tasksPerSecond.toFixed(2)), failures: summary.failures })}\n`);
      return summary.generated > 0 ? 0 : 1;
    },
  };
}

export const dataGenCommand = createDataGenCommand();
