/**
 * Task-generator throughput: tasks/s for each kind, end to end as `vistool data gen` runs it
 * (build data + layout + question, rasterise with its label map, check on pixels, PNG encode,
 * write), plus a per-stage breakdown for the CPU demo's configuration (d1 tables at 224×112).
 * Goal: ≥ 200 tasks/s for tables on this 2-core machine. The concurrency sweep shows how many
 * tasks in flight sharp's thread pool wants; the best one is used for the per-kind rows.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cpus, loadavg } from 'node:os';
import { encodePng } from '../env/core/image.js';
import { checkTask } from '../env/tasks/check.js';
import { generateDataset, type DatasetOptions } from '../env/tasks/dataset.js';
import type { Difficulty } from '../env/tasks/difficulty.js';
import { buildTask, GENERATED_KINDS } from '../env/tasks/generate.js';
import { renderWithLabelMap } from '../env/tasks/paint.js';
import { renderWithLabelMapSvg } from '../env/tasks/label-map-svg.js';
import { recordLine } from '../env/tasks/record-line.js';

/**
 * Wall-clock tasks/s, and the CPU time the whole process (sharp's threads included) spent per
 * task. On a shared machine the wall rate depends on everyone else; CPU per task does not, and
 * cores × 1000 / (CPU ms per task) is the rate this machine would reach with its cores to itself.
 */
async function throughput(root: string, options: Omit<DatasetOptions, 'split' | 'seed'>): Promise<{ rate: number; cpuMs: number; repaired: number; dropped: number }> {
  const out = join(root, `set-${Math.random().toString(36).slice(2)}`);
  const before = process.cpuUsage();
  const summary = await generateDataset(out, { ...options, seed: 1234, split: 'train' });
  const cpu = process.cpuUsage(before);
  await rm(out, { recursive: true, force: true });
  return { rate: summary.tasksPerSecond, cpuMs: (cpu.user + cpu.system) / 1000 / Math.max(1, summary.generated), repaired: summary.repaired, dropped: summary.dropped };
}

async function stages(root: string, n: number, difficulty: Difficulty, imageSize: [number, number] | null): Promise<Record<string, number>> {
  const ms: Record<string, number> = { build: 0, 'render + label map': 0, 'old: librsvg + code renders': 0, check: 0, 'png encode': 0, write: 0 };
  for (let i = 0; i < n; i++) {
    let t = performance.now();
    const built = buildTask({ seed: 99, split: 'train', index: i, attempt: 0, kind: 'table', difficulty, imageSize });
    ms.build! += performance.now() - t;
    t = performance.now();
    const { image, labelMap } = await renderWithLabelMap(built.scene);
    ms['render + label map']! += performance.now() - t;
    t = performance.now();
    await renderWithLabelMapSvg(built.scene);
    ms['old: librsvg + code renders']! += performance.now() - t;
    t = performance.now();
    const png = await encodePng(image);
    ms['png encode']! += performance.now() - t;
    t = performance.now();
    await checkTask(built.record, { rendered: { ...built, image, labelMap, png } });
    ms.check! += performance.now() - t;
    t = performance.now();
    await writeFile(join(root, `${i}.png`), png);
    recordLine(built.record);
    ms.write! += performance.now() - t;
  }
  return Object.fromEntries(Object.entries(ms).map(([k, v]) => [k, v / n]));
}

export async function benchTasks(): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'vistool-bench-tasks-'));
  try {
    process.stdout.write(`machine: ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'})\n`);
    for (const [d, size, n] of [[1, [224, 112], 60], [1, null, 40], [3, null, 20], [5, null, 8]] as [Difficulty, [number, number] | null, number][]) {
      process.stdout.write(`\nper-stage cost, d${d} table at ${size ? size.join('×') : 'the default canvas'}, one task at a time (wall ms/task; the old renderer measured on the same scenes):\n`);
      for (const [stage, ms] of Object.entries(await stages(root, n, d, size))) process.stdout.write(`  ${stage.padEnd(28)} ${ms.toFixed(2)}\n`);
    }

    process.stdout.write(`\nat the defaults (difficulty 1–5, default canvas, default concurrency), load average ${(loadavg()[0] ?? 0).toFixed(1)}:\n`);
    process.stdout.write(`  ${'set'.padEnd(16)} ${'tasks/s'.padStart(8)} ${'CPU ms/task'.padStart(12)} ${'ceiling tasks/s'.padStart(16)}\n`);
    const rows: [string, Omit<DatasetOptions, 'split' | 'seed'>][] = [['table d1–5', { kind: 'table', n: 300, difficulty: [1, 5], imageSize: null }], ['mixed d1–5', { kind: 'mixed', n: 300, difficulty: [1, 5], imageSize: null }]];
    for (const kind of GENERATED_KINDS) for (const d of [1, 3, 5] as Difficulty[]) rows.push([`${kind} d${d}`, { kind, n: d === 5 ? 40 : 100, difficulty: [d, d], imageSize: null }]);
    for (const [name, options] of rows) {
      const r = await throughput(root, options);
      process.stdout.write(`  ${name.padEnd(16)} ${r.rate.toFixed(1).padStart(8)} ${r.cpuMs.toFixed(1).padStart(12)} ${((cpus().length * 1000) / r.cpuMs).toFixed(0).padStart(16)}${r.dropped ? ' (some dropped)' : ''}\n`);
    }
    process.stdout.write('  goal: ≥ 200 tasks/s for table d1–5 and mixed d1–5 (≈ 10 CPU ms/task on 2 cores).\n');
    process.stdout.write('  before (librsvg text + code renders, measured 2026-12-02 on this machine, 20 tasks each, concurrency 4, CPU ms/task):\n');
    process.stdout.write('    table d1 33.8, d3 96.9, d5 454.8; vbar 33.9/62.4/97.4; hbar 28.8/54.9/94.0; grouped 48.2/81.6/117.7; line 29.6/54.6/94.7; table d1–5 141.9 (13.4 tasks/s); mixed d1–5 101.8 (18.2 tasks/s)\n');

    const cores = cpus().length;
    const load = loadavg()[0] ?? 0;
    process.stdout.write(`\nconcurrency sweep, d1 tables at 224×112, 300 tasks (load average ${load.toFixed(1)} on ${cores} cores):\n`);
    process.stdout.write(`  ${'concurrency'.padEnd(12)} ${'tasks/s'.padStart(8)} ${'CPU ms/task'.padStart(12)} ${'ceiling tasks/s'.padStart(16)}\n`);
    let best = { concurrency: 1, rate: 0, cpuMs: Infinity };
    for (const concurrency of [1, 2, 4, 8]) {
      const r = await throughput(root, { kind: 'table', n: 300, difficulty: [1, 1], imageSize: [224, 112], concurrency });
      process.stdout.write(`  ${String(concurrency).padEnd(12)} ${r.rate.toFixed(1).padStart(8)} ${r.cpuMs.toFixed(2).padStart(12)} ${((cores * 1000) / r.cpuMs).toFixed(0).padStart(16)}\n`);
      if (r.rate > best.rate) best = { concurrency, rate: r.rate, cpuMs: r.cpuMs };
    }
    const ceiling = (cores * 1000) / best.cpuMs;
    process.stdout.write(`  goal ≥ 200 tasks/s: measured ${best.rate.toFixed(1)} (concurrency ${best.concurrency}) — ${best.rate >= 200 ? 'met' : 'not met'}; CPU-bound ceiling with the cores idle: ${ceiling.toFixed(0)} — ${ceiling >= 200 ? 'met' : 'not met'}\n`);

    process.stdout.write(`\ntasks/s by kind and difficulty (concurrency ${best.concurrency}; default canvas unless noted):\n`);
    process.stdout.write(`  ${'kind'.padEnd(8)} ${'d1 224×112'.padStart(11)} ${'d1'.padStart(8)} ${'d3'.padStart(8)} ${'d5'.padStart(8)}\n`);
    const plan: [Difficulty, [number, number] | null, number][] = [[1, [224, 112], 200], [1, null, 100], [3, null, 40], [5, null, 16]];
    for (const kind of GENERATED_KINDS) {
      const cells: string[] = [];
      for (const [d, size, n] of plan) {
        const r = await throughput(root, { kind, n, difficulty: [d, d], imageSize: size, concurrency: best.concurrency });
        cells.push(`${r.rate.toFixed(1)}${r.dropped ? '*' : ''}`.padStart(d === 1 && size ? 11 : 8));
      }
      process.stdout.write(`  ${kind.padEnd(8)} ${cells.join(' ')}\n`);
    }
    process.stdout.write('  (* some tasks dropped after repairs; end to end: build, rasterise + label map, check, PNG, write)\n');
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}
