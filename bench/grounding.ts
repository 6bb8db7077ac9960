/**
 * OCR grounding speed on 800×600 generated images (table, vbar, hbar at difficulty 1–3, built
 * in memory): wall-clock and CPU milliseconds per image, per stage (detect, layout, read), and
 * full-image OCR (every piece of text read, as the `ocr` tool does) for comparison. The goal is
 * < 300 ms per 800×600 image on 2 cores. CPU ms is printed next to wall ms because a shared
 * machine inflates wall time: with the cores idle, wall time lies between CPU/threads and CPU.
 */
import { cpus, loadavg } from 'node:os';
import type { RgbImage } from '../env/core/image.js';
import { groundImage } from '../env/grounding/ground.js';
import { readText } from '../env/grounding/ocr.js';
import { createOcrSessions } from '../env/grounding/sessions.js';
import type { Difficulty } from '../env/tasks/difficulty.js';
import { buildTask, renderTask } from '../env/tasks/generate.js';

const PER_KIND = 9;
const GOAL_MS = 300;

interface Timing {
  wall: number;
  cpu: number;
  detect: number;
  layout: number;
  read: number;
}

function cpuMs(since: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1000;
}

function mean(values: readonly number[]): number {
  return values.reduce((a, b) => a + b, 0) / Math.max(1, values.length);
}

function p50(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[sorted.length >> 1] ?? NaN;
}

export async function benchGrounding(): Promise<void> {
  const threads = Math.min(2, cpus().length);
  const sessions = await createOcrSessions({ threads });
  process.stdout.write(`machine: ${cpus().length} cores, load average ${loadavg()[0]?.toFixed(1)}; onnxruntime ${threads} threads on ${sessions.device}\n`);
  const images: { kind: string; image: RgbImage }[] = [];
  for (const kind of ['table', 'vbar', 'hbar'] as const) {
    for (let i = 0; i < PER_KIND; i++) {
      const difficulty = ((i % 3) + 1) as Difficulty;
      const task = await renderTask(buildTask({ seed: 101, split: 'test', index: i, attempt: 0, kind, difficulty, imageSize: [800, 600] }));
      images.push({ kind, image: task.image });
    }
  }
  await groundImage((images[0] as { image: RgbImage }).image, { sessions }); // warm-up: first runs allocate

  const byKind = new Map<string, Timing[]>();
  const full: { wall: number; cpu: number }[] = [];
  for (const { kind, image } of images) {
    const cpu = process.cpuUsage();
    const started = performance.now();
    const g = await groundImage(image, { sessions });
    const timing = { wall: performance.now() - started, cpu: cpuMs(cpu), detect: g.timing.detectMs, layout: g.timing.layoutMs, read: g.timing.recognizeMs };
    byKind.set(kind, [...(byKind.get(kind) ?? []), timing]);
    const fullCpu = process.cpuUsage();
    const fullStart = performance.now();
    await readText(image, { sessions });
    full.push({ wall: performance.now() - fullStart, cpu: cpuMs(fullCpu) });
  }

  process.stdout.write(`grounding, ${PER_KIND} images of 800×600 per kind (difficulty 1–3):\n`);
  process.stdout.write(`  ${'kind'.padEnd(6)} ${'wall ms p50'.padStart(12)} ${'wall ms mean'.padStart(13)} ${'CPU ms mean'.padStart(12)} ${'detect'.padStart(7)} ${'layout'.padStart(7)} ${'read'.padStart(6)}\n`);
  const all: Timing[] = [];
  for (const [kind, list] of byKind) {
    all.push(...list);
    const row = [p50(list.map((t) => t.wall)), mean(list.map((t) => t.wall)), mean(list.map((t) => t.cpu)), mean(list.map((t) => t.detect)), mean(list.map((t) => t.layout)), mean(list.map((t) => t.read))];
    process.stdout.write(`  ${kind.padEnd(6)} ${row[0]!.toFixed(0).padStart(12)} ${row[1]!.toFixed(0).padStart(13)} ${row[2]!.toFixed(0).padStart(12)} ${row[3]!.toFixed(0).padStart(7)} ${row[4]!.toFixed(0).padStart(7)} ${row[5]!.toFixed(0).padStart(6)}\n`);
  }
  const wall = mean(all.map((t) => t.wall));
  const cpu = mean(all.map((t) => t.cpu));
  process.stdout.write(`  full-image OCR (every text read): wall ${mean(full.map((f) => f.wall)).toFixed(0)} ms, CPU ${mean(full.map((f) => f.cpu)).toFixed(0)} ms per image\n`);
  process.stdout.write(`  goal < ${GOAL_MS} ms per image: measured wall ${wall.toFixed(0)} ms — ${wall < GOAL_MS ? 'met' : 'not met'}; CPU ${cpu.toFixed(0)} ms per image, so on ${threads} idle cores between ${(cpu / threads).toFixed(0)} and ${cpu.toFixed(0)} ms — ${cpu < GOAL_MS ? 'met' : cpu / threads < GOAL_MS ? 'met only with both threads busy' : 'not met'}\n`);
}
