/**
 * The fixed evaluation set the grounding tests score against: generated tasks (table, vbar,
 * hbar at difficulty 1–3, two of each; the two vbar d3 charts have slanted tick labels), built
 * and rendered in memory by the task generator, with the generator's exact metadata as truth.
 * Rendered once per process; never written to disk.
 */
import { buildTask, renderTask } from '../../env/tasks/generate.js';
import type { Difficulty } from '../../env/tasks/difficulty.js';
import type { RgbImage } from '../../env/core/image.js';
import type { TaskRecord } from '../../env/tasks/record.js';

export interface GeneratedImage {
  record: TaskRecord;
  image: RgbImage;
  png: Buffer;
}

export const SET_SEED = 5;
export const SET_KINDS = ['table', 'vbar', 'hbar'] as const;
export const SET_DIFFICULTIES: readonly Difficulty[] = [1, 2, 3];
export const PER_CELL = 2;

let cached: Promise<GeneratedImage[]> | undefined;

export function generatedSet(): Promise<GeneratedImage[]> {
  cached ??= (async () => {
    const out: GeneratedImage[] = [];
    for (const kind of SET_KINDS) {
      for (const difficulty of SET_DIFFICULTIES) {
        for (let index = 0; index < PER_CELL; index++) {
          const rendered = await renderTask(buildTask({ seed: SET_SEED, split: 'test', index, attempt: 0, kind, difficulty, imageSize: null }));
          out.push({ record: rendered.record, image: rendered.image, png: rendered.png });
        }
      }
    }
    return out;
  })();
  return cached;
}
