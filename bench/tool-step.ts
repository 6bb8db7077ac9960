/**
 * One tool step as an episode pays it (env/episodes/episode.ts), and how bench/tools.ts times it.
 *
 * A step is the call through the registry, which paints into a buffer from the pixel pool; the
 * PNG encode (what the image store writes and the trainer reads); then the image handed back to
 * the pool, as an episode hands back each image once the next one replaces it. With `reuse`
 * false nothing is handed back, so every step paints into a fresh buffer: the step as it was
 * before the pool, measured beside it.
 *
 * It lives apart from bench/tools.ts so that the child process measuring under the env server's
 * allocator (tool-step-child.ts) runs exactly this code.
 */
import { encodePng, type RgbImage } from '../env/core/image.js';
import { releasePixels } from '../env/core/pixel-pool.js';
import type { PixelMetadata } from '../env/tools/metadata.js';
import { runToolCall } from '../env/tools/registry.js';

export const OPERATIONS = ['mask', 'draw', 'highlight'] as const;
export type Operation = (typeof OPERATIONS)[number];
/** The columns every step selects (the bench's table has eight). */
export const SELECTED = ['Country', 'Wins'];

export async function applyOnce(image: RgbImage, meta: PixelMetadata, op: Operation): Promise<RgbImage> {
  const outcome = await runToolCall(image, { name: `focus_on_columns_with_${op}`, arguments: { columns: SELECTED } }, meta);
  if (!outcome.ok) throw new Error(`${op}: ${outcome.error.message}`);
  return outcome.image;
}

export async function toolStep(image: RgbImage, meta: PixelMetadata, op: Operation, reuse = true): Promise<Buffer> {
  const edited = await applyOnce(image, meta, op);
  const png = await encodePng(edited);
  if (reuse) releasePixels(edited);
  return png;
}

/**
 * Steps per second of `step`, measured two ways, as bench/pillow_tools.py does:
 *  - wall: the best of TRIALS short trials (other processes on a shared machine only ever slow
 *    a trial down, so the fastest trial is the least disturbed);
 *  - cpu: steps per second of this process's CPU time over all trials (all threads, user +
 *    system), which contention for the cores does not inflate.
 * On a quiet machine the two agree; when they differ, trust cpu for the ratio.
 */
export const TRIALS = 5;
export interface Rate {
  wall: number;
  cpu: number;
}
export async function stepsPerSecond(step: () => Promise<unknown>, seconds: number): Promise<Rate> {
  for (let i = 0; i < 2; i++) await step(); // warm-up
  let best = 0;
  let total = 0;
  const cpuBefore = process.cpuUsage();
  for (let trial = 0; trial < TRIALS; trial++) {
    let steps = 0;
    let elapsed = 0;
    const start = performance.now();
    while (elapsed < seconds / TRIALS || steps < 3) {
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
