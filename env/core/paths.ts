/**
 * Path validation for anything a client or a data file names: the path must resolve, after
 * following symlinks, to a file inside an allowed root. `..`, absolute paths elsewhere and
 * symlinks that lead out are all refused with a message that names the root.
 */
import { realpath } from 'node:fs/promises';
import { isAbsolute, relative, resolve, sep } from 'node:path';

export class PathError extends Error {
  override name = 'PathError';
}

export function isInside(root: string, candidate: string): boolean {
  const rel = relative(root, candidate);
  return rel === '' || (!rel.startsWith('..' + sep) && rel !== '..' && !isAbsolute(rel));
}

/**
 * Resolves `path` (relative to `base`) and checks that the real file lies inside `root`.
 * Returns the real path.
 */
export async function resolveInsideRoot(root: string, base: string, path: string): Promise<string> {
  if (path.includes('\0')) throw new PathError('path contains a NUL byte');
  const realRoot = await realpath(root).catch(() => {
    throw new PathError(`allowed root '${root}' does not exist`);
  });
  const wanted = resolve(base, path);
  if (!isInside(resolve(root), wanted) && !isInside(realRoot, wanted)) {
    throw new PathError(`'${path}' is outside the allowed root '${realRoot}'`);
  }
  let real: string;
  try {
    real = await realpath(wanted);
  } catch {
    throw new PathError(`'${path}' does not exist (looked for ${wanted})`);
  }
  if (!isInside(realRoot, real)) {
    throw new PathError(`'${path}' leads outside the allowed root '${realRoot}' (through a symbolic link)`);
  }
  return real;
}

/**
 * `resolveInsideRoot` against several allowed roots (a run's training and evaluation folders):
 * the path is checked against the root it lies in, so none of them widens the others.
 */
export async function resolveInsideRoots(roots: readonly string[], base: string, path: string): Promise<string> {
  if (roots.length === 0) throw new PathError('no allowed root is configured');
  if (path.includes('\0')) throw new PathError('path contains a NUL byte');
  const wanted = resolve(base, path);
  for (const root of roots) {
    const realRoot = await realpath(root).catch(() => resolve(root));
    if (isInside(resolve(root), wanted) || isInside(realRoot, wanted)) return resolveInsideRoot(root, base, path);
  }
  if (roots.length === 1) return resolveInsideRoot(roots[0]!, base, path);
  throw new PathError(`'${path}' is outside the allowed roots ${roots.map((r) => `'${r}'`).join(', ')}`);
}
