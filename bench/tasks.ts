/**
 * Task-generator throughput, end to end as `vistool data gen` runs it (plan, build, render with
 * the label map, check on pixels, PNG, write), in tasks/s and CPU ms per task (every thread of
 * the process, sharp's included), by kind and by difficulty; the thread sweep's speedups are
 * ratios against the one-thread path measured in the same run. Goal: ≥ 200 tasks/s for tables
 * and mixed sets at difficulty 1–5 on their default canvases, on this 2-core machine.
 *
 * Each end-to-end run is a fresh process, as `data gen` is: its threads start with empty glyph
 * caches (under tsx here, so a worker also compiles the sources as it starts; the bundled CLI's
 * workers do not). On a shared machine a wall-clock rate depends on everyone else, so each
 * headline figure is the median of several runs with their spread, and the load average is
 * printed; CPU ms per task depends less on the others, and cores × 1000 / (CPU ms per task) is
 * the rate the cores would give with nothing else running (the ceiling).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { promisify } from 'node:util';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodePng } from '../env/core/image.js';
import { checkTask } from '../env/tasks/check.js';
import { threadCount, type DatasetOptions } from '../env/tasks/dataset.js';
import type { Difficulty } from '../env/tasks/difficulty.js';
import { buildTask, GENERATED_KINDS, TASK_PNG_LEVEL, type TaskSpec } from '../env/tasks/generate.js';
import { cachedGlyphCount } from '../env/tasks/glyph-cache.js';
import { renderWithLabelMap } from '../env/tasks/label-map.js';
import type { GeneratedKind } from '../env/tasks/record.js';
import { recordLine } from '../env/tasks/record-line.js';

const REPEATS = Number(process.env.VISTOOL_BENCH_REPEATS ?? '3');
const run = promisify(execFile);

interface Run {
  rate: number;
  cpuMs: number;
  dropped: number;
}

function cpuNow(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/**
 * One `data gen` run in a fresh process, as a user runs it: its threads start with empty glyph
 * caches, and every one of them is counted (CPU from just before generating to just after).
 */
async function throughput(root: string, options: Omit<DatasetOptions, 'split' | 'seed'>, seed = 1234): Promise<Run> {
  const out = join(root, `set-${Math.random().toString(36).slice(2)}`);
  const script = `
    const { generateDataset } = require(${JSON.stringify(join(__dirname, '..', 'env', 'tasks', 'dataset.ts'))});
    const before = process.cpuUsage();
    generateDataset(${JSON.stringify(out)}, ${JSON.stringify({ ...options, seed, split: 'train' })}).then((summary) => {
      const cpu = process.cpuUsage(before);
      process.stdout.write(JSON.stringify({ rate: summary.tasksPerSecond, cpuMs: (cpu.user + cpu.system) / 1000 / Math.max(1, summary.generated), dropped: summary.dropped }));
    });`;
  const { stdout } = await run(process.execPath, ['--import', 'tsx', '-e', script]);
  await rm(out, { recursive: true, force: true });
  return JSON.parse(stdout) as Run;
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
}

/** Median, min and max of `REPEATS` runs (different seeds, so no run reuses another's luck). */
async function repeated(root: string, options: Omit<DatasetOptions, 'split' | 'seed'>): Promise<{ rate: number; min: number; max: number; cpuMs: number }> {
  const runs: Run[] = [];
  for (let r = 0; r < REPEATS; r++) runs.push(await throughput(root, options, 1234 + r));
  const rates = runs.map((r) => r.rate);
  return { rate: median(rates), min: Math.min(...rates), max: Math.max(...rates), cpuMs: median(runs.map((r) => r.cpuMs)) };
}

/** CPU ms per task of each stage, in this thread, once the glyph cache has seen `warm` tasks of the same kind. */
async function stages(spec: Omit<TaskSpec, 'index' | 'attempt' | 'seed'>, n: number, warm: number): Promise<Record<string, number>> {
  const ms: Record<string, number> = { build: 0, 'render + label map': 0, 'png encode': 0, 'check': 0, 'record line': 0 };
  const tasks = (seed: number, count: number) => Array.from({ length: count }, (_, index) => ({ ...spec, seed, index, attempt: 0 }));
  for (const s of tasks(7, warm)) {
    try {
      await renderWithLabelMap(buildTask(s).scene);
    } catch {
      // a roll that does not fit warms nothing
    }
  }
  let made = 0;
  for (const s of tasks(99, n)) {
    let t = cpuNow();
    let built;
    try {
      built = buildTask(s);
    } catch {
      continue;
    }
    ms.build! += cpuNow() - t;
    t = cpuNow();
    const { image, labelMap } = await renderWithLabelMap(built.scene);
    ms['render + label map']! += cpuNow() - t;
    t = cpuNow();
    const png = await encodePng(image, { compressionLevel: TASK_PNG_LEVEL });
    ms['png encode']! += cpuNow() - t;
    t = cpuNow();
    await checkTask(built.record, { rendered: { ...built, image, labelMap, png } });
    ms.check! += cpuNow() - t;
    t = cpuNow();
    recordLine(built.record);
    ms['record line']! += cpuNow() - t;
    made++;
  }
  const out = Object.fromEntries(Object.entries(ms).map(([k, v]) => [k, v / Math.max(1, made)]));
  out.total = Object.values(out).reduce((a, b) => a + b, 0);
  return out;
}

function cell(text: string, width: number): string {
  return text.padStart(width);
}

export async function benchTasks(): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'vistool-bench-tasks-'));
  const cores = availableParallelism();
  const write = (line = '') => process.stdout.write(`${line}\n`);
  try {
    write(`machine: ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), load average ${loadavg().map((l) => l.toFixed(1)).join(' ')} — other processes share these cores`);

    write('\nper-stage CPU ms per task, one thread, glyph cache warm (after 150 tasks of the same kind):');
    const columns: [string, Omit<TaskSpec, 'index' | 'attempt' | 'seed'>][] = [
      ['table d1 224×112', { split: 'train', kind: 'table', difficulty: 1, imageSize: [224, 112] }],
      ['table d3', { split: 'train', kind: 'table', difficulty: 3, imageSize: null }],
      ['table d5', { split: 'train', kind: 'table', difficulty: 5, imageSize: null }],
      ['vbar d5', { split: 'train', kind: 'vbar', difficulty: 5, imageSize: null }],
      ['line d5', { split: 'train', kind: 'line', difficulty: 5, imageSize: null }],
    ];
    const measured = [];
    for (const [, spec] of columns) measured.push(await stages(spec, spec.difficulty >= 4 ? 40 : 100, 150));
    write(`  ${'stage'.padEnd(20)} ${columns.map(([name]) => cell(name, 17)).join('')}`);
    for (const stage of Object.keys(measured[0] ?? {})) write(`  ${stage.padEnd(20)} ${measured.map((m) => cell((m[stage] ?? 0).toFixed(2), 17)).join('')}`);
    write(`  (glyph rasters cached in this thread: ${cachedGlyphCount()}; a new glyph is drawn once per thread)`);

    const runs = REPEATS;
    write(`\nthreads: end to end, 300 tasks, difficulty 1–5, default canvases; median of ${runs} runs (min–max), speedup against 1 thread in this run:`);
    write(`  ${'kind'.padEnd(7)} ${'threads'.padStart(7)} ${'tasks/s'.padStart(9)} ${'min–max'.padStart(13)} ${'CPU ms/task'.padStart(12)} ${'ceiling/s'.padStart(10)} ${'speedup'.padStart(8)}`);
    const goal: Record<string, number> = {};
    for (const kind of ['table', 'mixed'] as const) {
      const counts = [...new Set([1, threadCount({ n: 300 }), cores])];
      let base = 0;
      for (const threads of counts) {
        const r = await repeated(root, { kind, n: 300, difficulty: [1, 5], imageSize: null, concurrency: threads });
        if (threads === 1) base = r.rate;
        if (threads === threadCount({ n: 300 })) goal[kind] = r.rate;
        write(`  ${kind.padEnd(7)} ${String(threads).padStart(7)} ${r.rate.toFixed(1).padStart(9)} ${`${r.min.toFixed(0)}–${r.max.toFixed(0)}`.padStart(13)} ${r.cpuMs.toFixed(2).padStart(12)} ${((cores * 1000) / r.cpuMs).toFixed(0).padStart(10)} ${`${(r.rate / base).toFixed(2)}×`.padStart(8)}`);
      }
    }
    for (const [kind, rate] of Object.entries(goal)) write(`  goal ≥ 200 tasks/s, ${kind}, default threads: measured ${rate.toFixed(1)} — ${rate >= 200 ? 'met' : 'not met'}`);

    write(`\nby kind and difficulty: end to end, default threads (one per core but one, fewer for a small set), default canvas unless noted, one run each; tasks/s | CPU ms/task:`);
    const plan: [string, [Difficulty, Difficulty], [number, number] | null, number][] = [
      ['d1 224×112', [1, 1], [224, 112], 300],
      ['d1', [1, 1], null, 200],
      ['d2', [2, 2], null, 200],
      ['d3', [3, 3], null, 150],
      ['d4', [4, 4], null, 100],
      ['d5', [5, 5], null, 80],
      ['d1–5', [1, 5], null, 300],
    ];
    write(`  ${'kind'.padEnd(8)} ${plan.map(([name]) => cell(name, 15)).join('')}`);
    for (const kind of [...GENERATED_KINDS, 'mixed'] as (GeneratedKind | 'mixed')[]) {
      const cells: string[] = [];
      for (const [, difficulty, imageSize, n] of plan) {
        const r = await throughput(root, { kind, n, difficulty, imageSize });
        cells.push(cell(`${r.rate.toFixed(0)}${r.dropped ? '*' : ''} | ${r.cpuMs.toFixed(1)}`, 15));
      }
      write(`  ${kind.padEnd(8)} ${cells.join('')}`);
    }
    write('  (* some tasks dropped after repairs. Each run starts its own threads, whose glyph caches start empty: short runs pay that warm-up.)');
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}
