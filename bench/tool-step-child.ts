/**
 * bench/tools.ts runs this in a child process started with the env server's allocator setting
 * (MALLOC_MMAP_THRESHOLD_=65536, trainer/vistool_trainer/rollouts/env_client.py), which glibc
 * reads only at start-up: the same pooled tool steps, timed the same way.
 *
 * Usage: node --import tsx bench/tool-step-child.ts IMAGE.png META.json SECONDS
 * Prints {"cpu_ms": {op: CPU ms per step}}.
 */
import sharp from 'sharp';
import { readFile } from 'node:fs/promises';
import { decodeImage } from '../env/core/image.js';
import { resolveMetadata } from '../env/tools/metadata.js';
import { OPERATIONS, stepsPerSecond, toolStep } from './tool-step.js';

async function main(): Promise<void> {
  const [imagePath, metaPath, seconds] = process.argv.slice(2);
  if (!imagePath || !metaPath || !seconds) throw new Error('usage: tool-step-child.ts IMAGE.png META.json SECONDS');
  sharp.concurrency(1);
  const image = await decodeImage(imagePath);
  const meta = resolveMetadata(JSON.parse(await readFile(metaPath, 'utf8')), image.width, image.height);
  const cpuMs: Record<string, number> = {};
  for (const op of OPERATIONS) cpuMs[op] = 1000 / (await stepsPerSecond(() => toolStep(image, meta, op), Number(seconds))).cpu;
  process.stdout.write(JSON.stringify({ cpu_ms: cpuMs }) + '\n');
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
