/**
 * What a run directory is, and folders of them. A run directory holds run.json, config.json or
 * metrics.jsonl. A *folder of runs* is a folder that is not a run itself but holds runs directly
 * inside it: the demo's runs/demo (its tools and text arms, beside summary.json, report.html and
 * the data/ both arms trained on), or a sweep. `vistool view`, the Runs view and the Datasets view
 * read folders by these rules, so the CLI and the editor show the same runs.
 *
 * A report (report.html, which the trainer's demo and `report` write: static HTML, no scripts)
 * belongs to a run when the run directory has one, else to the runs of the folder that has one.
 *
 * Read-only: looks at the file system, never changes it.
 */
import { readdir, realpath, stat } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { isInside } from '../core/paths.js';

/** Files that make a folder a run directory. */
export const RUN_MARKERS = ['run.json', 'config.json', 'metrics.jsonl'] as const;
export const REPORT_FILE = 'report.html';

async function isFile(path: string): Promise<boolean> {
  return stat(path).then((s) => s.isFile(), () => false);
}

export async function isRunDirectory(dir: string): Promise<boolean> {
  const found = await Promise.all(RUN_MARKERS.map((name) => isFile(join(dir, name))));
  return found.some(Boolean);
}

/**
 * Whether `link` is a symbolic link to a folder whose real path lies inside one of `allowedRoots`
 * (their real paths). Runs kept on another disk are linked into a runs folder; a link that leads
 * out of the folders a person opened (`runs/x -> /`) is not followed.
 */
export async function isLinkedFolderInside(link: string, allowedRoots: readonly string[]): Promise<boolean> {
  const real = await realpath(link).catch(() => null);
  if (real === null || !(await stat(real).then((s) => s.isDirectory(), () => false))) return false;
  const roots = await Promise.all(allowedRoots.map((root) => realpath(root).catch(() => resolve(root))));
  return roots.some((root) => isInside(root, real));
}

/** The folders directly inside `dir` (hidden ones aside), links to folders inside `allowedRoots` included, by path. */
async function subfolders(dir: string, allowedRoots: readonly string[]): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  const kept = await Promise.all(
    entries
      .filter((e) => !e.name.startsWith('.'))
      .map(async (e) => {
        const path = join(dir, e.name);
        if (e.isDirectory()) return path;
        return e.isSymbolicLink() && (await isLinkedFolderInside(path, allowedRoots)) ? path : null;
      }),
  );
  return kept.filter((d): d is string => d !== null).sort();
}

/**
 * The run directories directly inside `dir`, by name; [] when it has none (or is a run itself).
 * A symbolic link to a run is followed when it leads inside `allowedRoots` (by default `dir` itself).
 */
export async function runsInFolder(dir: string, allowedRoots: readonly string[] = [dir]): Promise<string[]> {
  if (await isRunDirectory(dir)) return [];
  const children = await subfolders(dir, allowedRoots);
  const marked = await Promise.all(children.map(async (child) => ((await isRunDirectory(child)) ? child : null)));
  return marked.filter((d): d is string => d !== null);
}

export interface FoundRun {
  dir: string;
  /** The folder of runs it sits in, below the runs folder; null for a run directly in the runs folder. */
  group: string | null;
}

/**
 * The runs a runs folder holds: its run directories, and the runs of each folder of runs in it
 * (one level down: a folder of folders of runs is not searched further). Sorted by path. Symbolic
 * links to folders are followed when they lead inside `allowedRoots` (by default the runs folder;
 * the editor passes its workspace folders).
 */
export async function findRuns(runsRoot: string, allowedRoots: readonly string[] = [runsRoot]): Promise<FoundRun[]> {
  const found: FoundRun[] = [];
  for (const child of await subfolders(runsRoot, allowedRoots)) {
    if (await isRunDirectory(child)) found.push({ dir: child, group: null });
    else for (const dir of await runsInFolder(child, allowedRoots)) found.push({ dir, group: child });
  }
  return found;
}

/** The report.html a run is read with: its own, else its folder of runs' (when the parent holds runs and is not one). */
export async function reportOf(runDir: string): Promise<string | null> {
  const own = join(runDir, REPORT_FILE);
  if (await isFile(own)) return own;
  const parent = dirname(runDir);
  if (parent === runDir || (await isRunDirectory(parent))) return null;
  const shared = join(parent, REPORT_FILE);
  return (await isFile(shared)) ? shared : null;
}

/** A folder of runs' name as the views show it (its folder name). */
export function groupName(dir: string): string {
  return basename(dir);
}

/**
 * Whether `path` lies inside a run directory below `root` (a run's own copy of its tasks, its
 * images): true when a folder between `root` (exclusive) and `path` is a run directory. Task
 * folders of a folder of runs (runs/demo/data/train) are not inside one.
 */
export async function isInsideRun(path: string, root: string): Promise<boolean> {
  const rel = relative(root, path);
  if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) return false;
  let folder = root;
  for (const part of rel.split(sep).slice(0, -1)) {
    folder = join(folder, part);
    if (await isRunDirectory(folder)) return true;
  }
  return false;
}
