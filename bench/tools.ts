/**
 * Tool throughput: steps per second for mask, draw and highlight on 800×600 and 1600×1200
 * tables, where a step is one tool call through the registry plus a PNG encode
 * (env/core/image.ts encodePng) — what an episode pays per tool call before storing the image.
 *
 * One core: sharp.concurrency(1) limits libvips to one worker thread, and steps run strictly
 * one after another, so at most one thread computes at any moment. The Pillow baseline
 * (bench/pillow_tools.py, single-threaded) runs on the same images in the same run, timed
 * inside Python so process start-up is not counted. Both sides' pixels are compared for equality.
 *
 * Also measures PNG encoder settings (zlib level × adaptive filtering) on one result, because
 * the encode dominates a step; every setting is checked to give the same bytes twice. The
 * trainer's side of the trade is measured too: Pillow's CPU time to decode our PNG against its
 * own PNG of the same pixels, since a cheaper encode must not make reading dearer.
 * Goal (issue 19): ≥ 4× Pillow per core at both sizes, pixels identical.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { decodeImage, encodePng, PNG_ZLIB_LEVEL, type RgbImage } from '../env/core/image.js';
import { resolveMetadata, type BBox, type PixelMetadata } from '../env/tools/metadata.js';
import { runToolCall } from '../env/tools/registry.js';

const SIZES: readonly [number, number][] = [
  [800, 600],
  [1600, 1200],
];
const OPERATIONS = ['mask', 'draw', 'highlight'] as const;
type Operation = (typeof OPERATIONS)[number];
const SELECTED = ['Country', 'Wins'];
const SECONDS = Number(process.env.VISTOOL_BENCH_SECONDS ?? '1.5');

const COLUMNS = ['Rider', 'Country', 'Wins', 'Team', 'Year', 'Stages', 'Podiums', 'Points'];

/** A striped table with text in every cell, filling the image: the kind of image the tools edit. */
async function renderTable(width: number, height: number): Promise<{ png: Buffer; image: RgbImage; meta: PixelMetadata }> {
  const margin = Math.round(width * 0.03);
  const cellW = Math.floor((width - 2 * margin) / COLUMNS.length);
  const rows = 20;
  const cellH = Math.floor((height - 2 * margin) / (rows + 1));
  const font = Math.round(cellH * 0.45);
  const parts = [`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}"><rect width="100%" height="100%" fill="#fff"/>`];
  for (let r = 0; r <= rows; r++) {
    const y = margin + r * cellH;
    parts.push(`<rect x="${margin}" y="${y}" width="${cellW * COLUMNS.length}" height="${cellH}" fill="${r === 0 ? '#c8d0dc' : r % 2 ? '#fbfbf0' : '#eef1f6'}"/>`);
    COLUMNS.forEach((name, c) => {
      const text = r === 0 ? name : `${name.slice(0, 3)} ${(r * 37 + c * 101) % 997}`;
      parts.push(`<text x="${margin + c * cellW + 6}" y="${y + cellH * 0.7}" font-size="${font}" font-family="DejaVu Sans, sans-serif" fill="#111">${text}</text>`);
    });
    parts.push(`<line x1="${margin}" y1="${y}" x2="${margin + cellW * COLUMNS.length}" y2="${y}" stroke="#555"/>`);
  }
  const columns_bbox: Record<string, BBox> = {};
  COLUMNS.forEach((name, c) => {
    columns_bbox[name] = { x1: margin + c * cellW, y1: margin, x2: margin + (c + 1) * cellW, y2: margin + (rows + 1) * cellH };
    parts.push(`<line x1="${margin + c * cellW}" y1="${margin}" x2="${margin + c * cellW}" y2="${margin + (rows + 1) * cellH}" stroke="#555"/>`);
  });
  parts.push('</svg>');
  const png = await sharp(Buffer.from(parts.join(''))).png().toBuffer();
  const image = await decodeImage(png);
  return { png, image, meta: resolveMetadata({ columns_bbox }, width, height) };
}

/**
 * Steps per second of `step`, measured two ways, as bench/pillow_tools.py does:
 *  - wall: the best of TRIALS short trials (other processes on a shared machine only ever slow
 *    a trial down, so the fastest trial is the least disturbed);
 *  - cpu: steps per second of this process's CPU time over all trials (all threads, user +
 *    system), which contention for the cores does not inflate.
 * On a quiet machine the two agree; when they differ, trust cpu for the ratio.
 */
const TRIALS = 5;
interface Rate {
  wall: number;
  cpu: number;
}
async function stepsPerSecond(step: () => Promise<unknown>): Promise<Rate> {
  for (let i = 0; i < 2; i++) await step(); // warm-up
  let best = 0;
  let total = 0;
  const cpuBefore = process.cpuUsage();
  for (let trial = 0; trial < TRIALS; trial++) {
    let steps = 0;
    let elapsed = 0;
    const start = performance.now();
    while (elapsed < SECONDS / TRIALS || steps < 3) {
      await step();
      steps++;
      elapsed = (performance.now() - start) / 1000;
    }
    total += steps;
    best = Math.max(best, steps / elapsed);
  }
  const cpu = process.cpuUsage(cpuBefore);
  return { wall: best, cpu: total / ((cpu.user + cpu.system) / 1e6) };
}

async function applyOnce(image: RgbImage, meta: PixelMetadata, op: Operation): Promise<RgbImage> {
  const outcome = await runToolCall(image, { name: `focus_on_columns_with_${op}`, arguments: { columns: SELECTED } }, meta);
  if (!outcome.ok) throw new Error(`${op}: ${outcome.error.message}`);
  return outcome.image;
}

/** Python with Pillow: $VISTOOL_PYTHON, else .venv/bin/python, else python3; null when none has Pillow. */
function findPillowPython(): string | null {
  const candidates = [process.env.VISTOOL_PYTHON, '.venv/bin/python', 'python3'].filter((p): p is string => !!p && (p === 'python3' || existsSync(p)));
  for (const python of candidates) {
    const probe = spawnSync(python, ['-c', 'import PIL'], { encoding: 'utf8' });
    if (probe.status === 0) return python;
  }
  return null;
}

interface PillowResult {
  steps_per_s: number;
  steps_per_cpu_s: number;
  png_bytes: number;
}

function row(cells: (string | number)[], widths: number[]): string {
  return cells.map((c, i) => String(c).padStart(widths[i] ?? 10)).join('  ');
}

export async function benchTools(): Promise<void> {
  sharp.concurrency(1);
  const python = findPillowPython();
  if (!python) process.stdout.write('Pillow baseline not run: no Python with Pillow found ($VISTOOL_PYTHON, .venv/bin/python, python3). Install it with `pip install pillow`.\n');
  const dir = await mkdtemp(join(tmpdir(), 'vistool-bench-tools-'));
  const widths = [10, 10, 9, 10, 8, 8, 9, 8, 9, 8, 8, 16, 18];
  const header = ['size', 'op', 'apply ms', 'encode ms', 'encode %', 'step ms', 'Pillow ms', 'cpu ×', `L${PREVIOUS_LEVEL} cpu ×`, 'wall ×', 'same px', 'KiB us/L3/Pil', 'Pil decode ms us/Pil'];
  const lines: string[] = [row(header, widths)];
  const perCore: number[] = [];
  try {
    for (const [width, height] of SIZES) {
      const { png, image, meta } = await renderTable(width, height);
      const imagePath = join(dir, `table-${width}.png`);
      const metaPath = join(dir, `table-${width}.json`);
      await writeFile(imagePath, png);
      await writeFile(metaPath, JSON.stringify({ columns_bbox: meta.columns_bbox }));

      let pillow: Record<string, PillowResult> | null = null;
      let pillowVersion = '';
      if (python) {
        const run = spawnSync(python, ['bench/pillow_tools.py', '--image', imagePath, '--meta', metaPath, '--select', SELECTED.join(','), '--seconds', String(SECONDS), '--dump', dir], { encoding: 'utf8' });
        if (run.status !== 0) throw new Error(`bench/pillow_tools.py failed: ${run.stderr}`);
        const parsed = JSON.parse(run.stdout) as { pillow: string; results: Record<string, PillowResult> };
        pillow = parsed.results;
        pillowVersion = parsed.pillow;
      }

      for (const op of OPERATIONS) {
        const applied = await applyOnce(image, meta, op);
        const ours = await stepsPerSecond(async () => encodePng(await applyOnce(image, meta, op)));
        const before = await stepsPerSecond(async () => encodeAt(await applyOnce(image, meta, op), PREVIOUS_LEVEL));
        const applyRate = await stepsPerSecond(async () => applyOnce(image, meta, op));
        const encodeRate = await stepsPerSecond(async () => encodePng(applied));
        const ourPng = await encodePng(applied);
        const previousPng = await encodeAt(applied, PREVIOUS_LEVEL);
        const theirs = pillow?.[op];
        let same = 'n/a';
        let decode = 'n/a';
        if (python) {
          const dumped = await readFile(join(dir, `${op}.rgb`));
          same = dumped.equals(applied.data) ? 'yes' : `no (${countDifferent(dumped, applied.data)} B)`;
          const ourPath = join(dir, `${op}.vistool.png`);
          await writeFile(ourPath, ourPng);
          decode = pillowDecodeMs(python, [ourPath, join(dir, `${op}.pillow.png`)]);
        }
        const applyMs = 1000 / applyRate.cpu;
        const encodeMs = 1000 / encodeRate.cpu;
        const ratio = (a: number, b: number | undefined) => (b === undefined ? 'n/a' : `${(a / b).toFixed(2)}×`);
        if (theirs) perCore.push(ours.cpu / theirs.steps_per_cpu_s);
        lines.push(
          row(
            [
              `${width}×${height}`,
              op,
              applyMs.toFixed(2),
              encodeMs.toFixed(2),
              `${((100 * encodeMs) / (applyMs + encodeMs)).toFixed(0)}%`,
              (1000 / ours.cpu).toFixed(2),
              theirs ? (1000 / theirs.steps_per_cpu_s).toFixed(2) : 'n/a',
              ratio(ours.cpu, theirs?.steps_per_cpu_s),
              ratio(before.cpu, theirs?.steps_per_cpu_s),
              ratio(ours.wall, theirs?.steps_per_s),
              same,
              `${(ourPng.length / 1024).toFixed(0)}/${(previousPng.length / 1024).toFixed(0)}/${theirs ? (theirs.png_bytes / 1024).toFixed(0) : 'n/a'}`,
              decode,
            ],
            widths,
          ),
        );
      }
      if (pillowVersion && width === SIZES[0]?.[0]) lines.push(`(Pillow ${pillowVersion})`);
    }
    process.stdout.write(
      `Tool steps on one core (a step = apply + PNG encode), ${SECONDS}s per cell. ms are CPU time per step (all threads); cpu × = vistool / Pillow per\n` +
        `second of CPU time, with encodePng's settings (zlib level ${PNG_ZLIB_LEVEL}); L${PREVIOUS_LEVEL} cpu × = the same with the previous setting (level ${PREVIOUS_LEVEL}), measured\n` +
        `in this run; wall × = best-of-${TRIALS} wall clock (sharp's worker thread overlaps with the main one, so it runs above one core);\n` +
        `Pil decode ms: what the trainer pays to read our PNG vs Pillow's own PNG of the same pixels (Image.open + convert("RGB"))\n${lines.join('\n')}\n`,
    );
    if (perCore.length > 0) {
      const worst = Math.min(...perCore);
      process.stdout.write(`goal ≥ 4× Pillow per core at 800×600 and 1600×1200, pixels identical: lowest cpu × ${worst.toFixed(2)} — ${worst >= 4 ? 'met' : 'not met'}\n`);
    }
    await benchEncoderSettings();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** CPU ms per decode in Pillow for each path, as "a/b". */
function pillowDecodeMs(python: string, paths: string[]): string {
  const run = spawnSync(python, ['bench/pillow_tools.py', '--decode', paths.join(','), '--seconds', String(SECONDS)], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`bench/pillow_tools.py --decode failed: ${run.stderr}`);
  const times = (JSON.parse(run.stdout) as { decode_cpu_ms: Record<string, number> }).decode_cpu_ms;
  return paths.map((p) => (times[p] ?? NaN).toFixed(2)).join('/');
}

/** The zlib level encodePng used before PNG_ZLIB_LEVEL, measured beside it as the baseline. */
const PREVIOUS_LEVEL = 3;
function encodeAt(image: RgbImage, compressionLevel: number): Promise<Buffer> {
  return sharp(image.data, { raw: { width: image.width, height: image.height, channels: 3 } }).png({ compressionLevel, adaptiveFiltering: false, palette: false }).toBuffer();
}

function countDifferent(a: Buffer, b: Buffer): number {
  if (a.length !== b.length) return Math.max(a.length, b.length);
  let n = 0;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) n++;
  return n;
}

/** Encode time and size of each 800×600 result for several zlib levels and filter choices. */
async function benchEncoderSettings(): Promise<void> {
  const { image, meta } = await renderTable(800, 600);
  const results = await Promise.all(OPERATIONS.map((op) => applyOnce(image, meta, op)));
  const widths = [6, 9, 22, 22, 22, 10];
  const lines = [
    `\nPNG encoder settings on the 800×600 results (sharp/libspng, one core): CPU ms per encode / KiB; current encodePng: level ${PNG_ZLIB_LEVEL}, no adaptive filtering`,
    row(['level', 'adaptive', ...OPERATIONS, 'same twice'], widths),
  ];
  const settings: [number, boolean][] = [[1, false], [2, false], [3, false], [6, false], [9, false], [3, true], [6, true]];
  for (const [compressionLevel, adaptiveFiltering] of settings) {
    const cells: string[] = [];
    let deterministic = true;
    for (const result of results) {
      const encode = () => sharp(result.data, { raw: { width: result.width, height: result.height, channels: 3 } }).png({ compressionLevel, adaptiveFiltering, palette: false }).toBuffer();
      const a = await encode();
      deterministic &&= a.equals(await encode());
      const rate = await stepsPerSecond(encode);
      cells.push(`${(1000 / rate.cpu).toFixed(2)} ms / ${(a.length / 1024).toFixed(0)} KiB`);
    }
    lines.push(row([compressionLevel, String(adaptiveFiltering), ...cells, deterministic ? 'yes' : 'NO'], widths));
  }
  process.stdout.write(lines.join('\n') + '\n');
}
