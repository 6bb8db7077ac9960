/**
 * Content-addressed image storage: every image an episode shows is written once as
 * `<dir>/<sha256>.png`, so the trainer, the viewer and the server share files by name and a
 * rollout record can refer to images by hash. Writes are atomic (temp file + rename), so a
 * reader never sees half a PNG and two writers of the same image cannot corrupt it.
 */
import { mkdir, rename, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { contentHash, encodePng, type RgbImage } from '../core/image.js';

export interface StoredImage {
  ref: string;
  path: string;
  width: number;
  height: number;
  png: Buffer;
}

export class ImageStore {
  private readonly known = new Set<string>();
  private ready: Promise<unknown> | undefined;
  private sequence = 0;

  constructor(readonly dir: string) {}

  async put(image: RgbImage): Promise<StoredImage> {
    return this.putPng(await encodePng(image), image.width, image.height);
  }

  async putPng(png: Buffer, width: number, height: number): Promise<StoredImage> {
    const ref = contentHash(png);
    const path = this.pathOf(ref);
    if (!this.known.has(ref)) {
      this.ready ??= mkdir(this.dir, { recursive: true });
      await this.ready;
      if (!(await exists(path))) {
        const temp = join(this.dir, `.${ref}.${process.pid}.${this.sequence++}.tmp`);
        await writeFile(temp, png);
        await rename(temp, path);
      }
      this.known.add(ref);
    }
    return { ref, path, width, height, png };
  }

  pathOf(ref: string): string {
    if (!/^[0-9a-f]{64}$/.test(ref)) throw new Error(`not an image reference: '${ref}'`);
    return join(this.dir, `${ref}.png`);
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}
