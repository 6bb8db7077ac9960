/**
 * Writes a data-set folder atomically: everything goes into a temporary sibling folder which is
 * renamed into place at the end (a previous data set there is swapped out, then deleted). A
 * reader never sees a half-written folder; a crash leaves only a `.NAME.tmp-PID` folder behind.
 * Refuses to replace a folder holding anything other than tasks.jsonl and images/.
 */
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';

export async function assertReplaceable(out: string): Promise<void> {
  let entries: string[];
  try {
    entries = await readdir(out);
  } catch {
    return;
  }
  const foreign = entries.filter((e) => e !== 'tasks.jsonl' && e !== 'images');
  if (foreign.length > 0) throw new Error(`${out} exists and holds files that are not a vistool data set (${foreign.slice(0, 3).join(', ')}); choose an empty or new --out folder`);
}

/** Runs `fill(tmpDir)` and moves the result to `outDir`; cleans up on failure. */
export async function writeDirAtomically<T>(outDir: string, fill: (tmpDir: string) => Promise<T>): Promise<T> {
  const out = resolve(outDir);
  await assertReplaceable(out);
  const tmp = join(dirname(out), `.${basename(out)}.tmp-${process.pid}`);
  await rm(tmp, { recursive: true, force: true });
  await mkdir(join(tmp, 'images'), { recursive: true });
  try {
    const result = await fill(tmp);
    const old = `${tmp}-old`;
    const exists = await stat(out).then(() => true, () => false);
    if (exists) await rename(out, old);
    await rename(tmp, out);
    if (exists) await rm(old, { recursive: true, force: true });
    return result;
  } catch (err) {
    await rm(tmp, { recursive: true, force: true });
    throw err;
  }
}
