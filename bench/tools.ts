/**
 * Tool throughput: CPU time per tool step for mask, draw and highlight on 800×600 and 1600×1200
 * tables, against a Pillow implementation with ReFocus's exact geometry (bench/pillow_tools.py).
 * A step is what an episode pays per tool call before storing the image (bench/tool-step.ts):
 * the call through the registry, painting into a pooled buffer, the PNG encode
 * (env/core/image.ts encodePng), and the image handed back to the pixel pool once replaced.
 *
 * One core: steps run strictly one after another on the main thread (the encode too; sharp, which
 * only decodes here, is held to one thread), so at most one thread computes at any moment. The Pillow baseline
 * (single-threaded) runs on the same images, timed inside Python so process start-up is not
 * counted, interleaved with ours in ROUNDS rounds (Pillow, ours, Pillow, ours ...); each side's
 * best round counts, since a shared machine only ever slows a round down. Both sides' pixels are
 * compared for equality.
 *
 * Beside it, in the same rounds: the step with a fresh buffer every time (as before the pool),
 * and, in a child process, the pooled step under the env server's allocator setting
 * (MALLOC_MMAP_THRESHOLD_=65536), which glibc reads only at start-up and which makes every
 * allocation over 64 KiB inside the encoder a fresh mapping.
 *
 * Also measures PNG encoders (node's zlib by level, sharp's before it) on one result, because
 * the encode dominates a step; every one is checked to give the same bytes twice. The
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
import { decodeImage, encodePng, type RgbImage } from '../env/core/image.js';
import { releasePixels } from '../env/core/pixel-pool.js';
import { encodeRgbPng, PNG_ZLIB_LEVEL } from '../env/core/png-encode.js';
import { resolveMetadata, type BBox, type PixelMetadata } from '../env/tools/metadata.js';
import { applyOnce, OPERATIONS, SELECTED, stepsPerSecond, toolStep, TRIALS, type Rate } from './tool-step.js';

const SIZES: readonly [number, number][] = [
  [800, 600],
  [1600, 1200],
];
const SECONDS = Number(process.env.VISTOOL_BENCH_SECONDS ?? '1.5');
/** Pillow and our steps alternate this many times; each measures SECONDS / ROUNDS per cell. */
const ROUNDS = 3;
/** The env server's allocator setting (trainer/vistool_trainer/rollouts/env_client.py SERVER_MALLOC_ENV). */
const SERVER_MALLOC = { MALLOC_MMAP_THRESHOLD_: '65536' };

const COLUMNS = ['Rider', 'Country', 'Wins', 'Team', 'Year', 'Stages', 'Podiums', 'Points'];

/** A striped table with text in every cell, filling the image: the kind of image the tools edit. */
export async function renderTable(width: number, height: number): Promise<{ png: Buffer; image: RgbImage; meta: PixelMetadata }> {
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

function runPillow(python: string, imagePath: string, metaPath: string, seconds: number, dumpDir?: string): { version: string; results: Record<string, PillowResult> } {
  const args = ['bench/pillow_tools.py', '--image', imagePath, '--meta', metaPath, '--select', SELECTED.join(','), '--seconds', String(seconds)];
  const run = spawnSync(python, dumpDir ? [...args, '--dump', dumpDir] : args, { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`bench/pillow_tools.py failed: ${run.stderr}`);
  const parsed = JSON.parse(run.stdout) as { pillow: string; results: Record<string, PillowResult> };
  return { version: parsed.pillow, results: parsed.results };
}

/** The pooled step's CPU ms per op in a child process started with the env server's allocator setting. */
function serverAllocatorStepMs(imagePath: string, metaPath: string, seconds: number): Record<string, number> {
  const run = spawnSync(process.execPath, ['--import', 'tsx', 'bench/tool-step-child.ts', imagePath, metaPath, String(seconds)], {
    encoding: 'utf8',
    env: { ...process.env, ...SERVER_MALLOC },
  });
  if (run.status !== 0) throw new Error(`bench/tool-step-child.ts failed: ${run.stderr}`);
  return (JSON.parse(run.stdout) as { cpu_ms: Record<string, number> }).cpu_ms;
}

/** The better of two rates, each way: the least disturbed round. */
function best(a: Rate | undefined, b: Rate): Rate {
  return a ? { wall: Math.max(a.wall, b.wall), cpu: Math.max(a.cpu, b.cpu) } : b;
}

function row(cells: (string | number)[], widths: number[]): string {
  return cells.map((c, i) => String(c).padStart(widths[i] ?? 10)).join('  ');
}

export async function benchTools(): Promise<void> {
  sharp.concurrency(1);
  const python = findPillowPython();
  if (!python) process.stdout.write('Pillow baseline not run: no Python with Pillow found ($VISTOOL_PYTHON, .venv/bin/python, python3). Install it with `pip install pillow`.\n');
  const dir = await mkdtemp(join(tmpdir(), 'vistool-bench-tools-'));
  const widths = [10, 10, 9, 10, 8, 8, 9, 7, 9, 11, 7, 8, 11, 18];
  const header = ['size', 'op', 'apply ms', 'encode ms', 'encode %', 'step ms', 'Pillow ms', 'cpu ×', 'fresh ×', 'server mm ×', 'wall ×', 'same px', 'KiB us/Pil', 'Pil decode ms us/Pil'];
  const lines: string[] = [row(header, widths)];
  const perCore: number[] = [];
  const perCoreServer: number[] = [];
  let pillowVersion = '';
  try {
    for (const [width, height] of SIZES) {
      const { png, image, meta } = await renderTable(width, height);
      const imagePath = join(dir, `table-${width}.png`);
      const metaPath = join(dir, `table-${width}.json`);
      await writeFile(imagePath, png);
      await writeFile(metaPath, JSON.stringify({ columns_bbox: meta.columns_bbox }));

      const pillow: Record<string, Rate> = {};
      const pillowBytes: Record<string, number> = {};
      const pooled: Record<string, Rate> = {};
      const fresh: Record<string, Rate> = {};
      const serverMs: Record<string, number> = {};
      for (let round = 0; round < ROUNDS; round++) {
        if (python) {
          const run = runPillow(python, imagePath, metaPath, SECONDS / ROUNDS, round === 0 ? dir : undefined);
          pillowVersion = run.version;
          for (const [op, result] of Object.entries(run.results)) {
            pillow[op] = best(pillow[op], { wall: result.steps_per_s, cpu: result.steps_per_cpu_s });
            pillowBytes[op] = result.png_bytes;
          }
        }
        for (const op of OPERATIONS) {
          pooled[op] = best(pooled[op], await stepsPerSecond(() => toolStep(image, meta, op), SECONDS / ROUNDS));
          fresh[op] = best(fresh[op], await stepsPerSecond(() => toolStep(image, meta, op, false), SECONDS / ROUNDS));
        }
        for (const [op, ms] of Object.entries(serverAllocatorStepMs(imagePath, metaPath, SECONDS / ROUNDS))) serverMs[op] = Math.min(serverMs[op] ?? Infinity, ms);
      }

      for (const op of OPERATIONS) {
        const applied = await applyOnce(image, meta, op);
        const applyRate = await stepsPerSecond(async () => releasePixels(await applyOnce(image, meta, op)), SECONDS);
        const encodeRate = await stepsPerSecond(async () => encodePng(applied), SECONDS);
        const ourPng = await encodePng(applied);
        const ours = pooled[op] as Rate;
        const theirs = pillow[op];
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
        const stepServerMs = serverMs[op] as number;
        const ratio = (a: number, b: number | undefined) => (b === undefined ? 'n/a' : `${(a / b).toFixed(2)}×`);
        if (theirs && same === 'yes') {
          perCore.push(ours.cpu / theirs.cpu);
          perCoreServer.push(1000 / stepServerMs / theirs.cpu);
        } else if (theirs) {
          perCore.push(0); // pixels differ: no ratio counts
          perCoreServer.push(0);
        }
        lines.push(
          row(
            [
              `${width}×${height}`,
              op,
              applyMs.toFixed(2),
              encodeMs.toFixed(2),
              `${((100 * encodeMs) / (applyMs + encodeMs)).toFixed(0)}%`,
              (1000 / ours.cpu).toFixed(2),
              theirs ? (1000 / theirs.cpu).toFixed(2) : 'n/a',
              ratio(ours.cpu, theirs?.cpu),
              ratio((fresh[op] as Rate).cpu, theirs?.cpu),
              ratio(1000 / stepServerMs, theirs?.cpu),
              ratio(ours.wall, theirs?.wall),
              same,
              `${(ourPng.length / 1024).toFixed(0)}/${pillowBytes[op] ? (pillowBytes[op] / 1024).toFixed(0) : 'n/a'}`,
              decode,
            ],
            widths,
          ),
        );
        releasePixels(applied);
      }
    }
    process.stdout.write(
      `Tool steps on one core, ${SECONDS}s per cell in ${ROUNDS} rounds interleaved with Pillow ${pillowVersion || '(not run)'}, best round each side.\n` +
        `A step = the call (painting into a pooled buffer) + PNG encode (node zlib level ${PNG_ZLIB_LEVEL}, no filters) + the image handed back, as an episode pays it.\n` +
        `ms are CPU time per step (all threads); apply and encode are timed apart, encode % = encode / (apply + encode).\n` +
        `cpu × = vistool / Pillow per second of CPU time; fresh × = the same with a fresh buffer every step (no pool, as before);\n` +
        `server mm × = the pooled step in a child started with the env server's allocator (MALLOC_MMAP_THRESHOLD_=65536);\n` +
        `wall × = best-of-${TRIALS} wall clock;\n` +
        `Pil decode ms: what the trainer pays to read our PNG vs Pillow's own PNG of the same pixels (Image.open + convert("RGB"))\n${lines.join('\n')}\n`,
    );
    if (perCore.length > 0) {
      const worst = Math.min(...perCore);
      const worstServer = Math.min(...perCoreServer);
      process.stdout.write(
        `goal ≥ 4× Pillow per core at 800×600 and 1600×1200, pixels identical: lowest cpu × ${worst.toFixed(2)} — ${worst >= 4 ? 'met' : 'not met'}` +
          ` (under the env server's allocator: lowest ${worstServer.toFixed(2)}× — ${worstServer >= 4 ? 'met' : 'not met'})\n`,
      );
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

function countDifferent(a: Buffer, b: Buffer): number {
  if (a.length !== b.length) return Math.max(a.length, b.length);
  let n = 0;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) n++;
  return n;
}

/**
 * Encode time and size of each 800×600 result for several encoders: node's zlib (png-encode.ts,
 * what encodePng uses) at several levels, and sharp's encoder (libvips + libspng, what vistool
 * used before issue 19) with and without adaptive filtering. Each is checked to give the same
 * bytes twice and, decoded by sharp, the same pixels.
 */
async function benchEncoderSettings(): Promise<void> {
  const { image, meta } = await renderTable(800, 600);
  const results = await Promise.all(OPERATIONS.map((op) => applyOnce(image, meta, op)));
  const widths = [24, 22, 22, 22, 10];
  const lines = [
    `\nPNG encoders on the 800×600 results (one core): CPU ms per encode / KiB; encodePng is node zlib level ${PNG_ZLIB_LEVEL}, no filters`,
    row(['encoder', ...OPERATIONS, 'same twice'], widths),
  ];
  const encoders: [string, (r: RgbImage) => Promise<Buffer>][] = [
    ...[1, 2, 3, 6].map((level): [string, (r: RgbImage) => Promise<Buffer>] => [`node zlib ${level}${level === PNG_ZLIB_LEVEL ? ' (now)' : ''}`, async (r) => encodeRgbPng(r, level)]),
    ...([[1, false], [3, false], [6, false], [6, true]] as const).map(([compressionLevel, adaptiveFiltering]): [string, (r: RgbImage) => Promise<Buffer>] => [
      `sharp ${compressionLevel}${adaptiveFiltering ? ' adaptive' : ''}${compressionLevel === 1 && !adaptiveFiltering ? ' (before)' : ''}`,
      (r) => sharp(r.data, { raw: { width: r.width, height: r.height, channels: 3 } }).png({ compressionLevel, adaptiveFiltering, palette: false }).toBuffer(),
    ]),
  ];
  for (const [name, encode] of encoders) {
    const cells: string[] = [];
    let deterministic = true;
    for (const result of results) {
      const a = await encode(result);
      deterministic &&= a.equals(await encode(result));
      const { data } = await sharp(a).raw().toBuffer({ resolveWithObject: true });
      if (!data.equals(result.data)) throw new Error(`${name}: the PNG does not decode to the pixels it was given`);
      const rate = await stepsPerSecond(() => encode(result), SECONDS);
      cells.push(`${(1000 / rate.cpu).toFixed(2)} ms / ${(a.length / 1024).toFixed(0)} KiB`);
    }
    lines.push(row([name, ...cells, deterministic ? 'yes' : 'NO'], widths));
  }
  process.stdout.write(lines.join('\n') + '\n');
}
