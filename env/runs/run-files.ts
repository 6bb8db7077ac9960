/**
 * Which file a request for a run's file (`/files/<run>/<path>`) may read. The rule:
 *
 * 1. The path is taken relative to the run directory and must stay inside it as written: `..`
 *    or an absolute path that leaves it is refused, whatever is on disk.
 * 2. A file whose real path (symbolic links followed) is inside the run directory is served.
 * 3. A file whose real path is outside is served only when it was reached through a folder of
 *    the run that is a symbolic link to a directory (`images -> /data/shared-images`, a layout
 *    users set up to keep images on a big disk or share them between runs), and only when it is
 *    an image (.png, .jpg, .jpeg by both its requested and its real name) that is a regular file.
 *    Images are all a panel loads from a run by URL (the viewer's images/<hash>.png); everything
 *    else in a run is read by the host itself. So a linked folder that points somewhere
 *    unexpected (`images -> /`) exposes no more than the images under it, and a link to a file
 *    outside (`notes.txt -> /etc/passwd`, `x.png -> ~/.ssh/id_rsa`) is refused as before.
 *
 * Read-only: it looks at the file system (lstat, realpath), never changes it.
 */
import { lstat, realpath, stat } from 'node:fs/promises';
import { extname, join, relative, resolve, sep } from 'node:path';
import { isInside, PathError, resolveInsideRoot } from '../core/paths.js';

const LINKABLE_TYPES = new Set(['.png', '.jpg', '.jpeg']);

/** The real path of the file `path` names in `runDir`, or a PathError saying why it may not be read. */
export async function resolveRunFile(runDir: string, path: string): Promise<string> {
  try {
    return await resolveInsideRoot(runDir, runDir, path);
  } catch (err) {
    if (!(err instanceof PathError) || !/through a symbolic link/.test(err.message)) throw err;
    const real = await realpath(resolve(runDir, path));
    if (!(await throughLinkedFolder(runDir, path))) throw err;
    const info = await stat(real);
    if (!LINKABLE_TYPES.has(extname(path).toLowerCase()) || !LINKABLE_TYPES.has(extname(real).toLowerCase()) || !info.isFile()) {
      throw new PathError(`'${path}' leads outside the run through a linked folder, and only images (.png, .jpg) are served from one`);
    }
    return real;
  }
}

/** Whether one of the folders on the way from the run directory to `path` is a symbolic link to a directory. */
async function throughLinkedFolder(runDir: string, path: string): Promise<boolean> {
  const root = resolve(runDir);
  const wanted = resolve(root, path);
  if (!isInside(root, wanted)) return false;
  const parts = relative(root, wanted).split(sep).slice(0, -1);
  let folder = root;
  for (const part of parts) {
    folder = join(folder, part);
    const info = await lstat(folder).catch(() => null);
    if (!info) return false;
    if (info.isSymbolicLink()) return (await stat(folder).catch(() => null))?.isDirectory() ?? false;
  }
  return false;
}
