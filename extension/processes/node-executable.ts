/**
 * Which Node runs the env server and the CLI (task generation): the `vistool.nodePath`
 * setting, else `node` on PATH, else the extension host's own executable run as Node (in
 * desktop VS Code that is Electron, which needs ELECTRON_RUN_AS_NODE).
 *
 * Editor-free (unit-tested under plain Node).
 */
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

export interface NodeExecutable {
  command: string;
  /** Extra variables the command needs to behave as Node. */
  env: Record<string, string>;
  /** True when it is a real `node` (the trainer can then start `node bin/vistool.js serve` by name). */
  onPath: boolean;
}

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export function findOnPath(name: string, pathList: string | undefined): string | undefined {
  for (const dir of (pathList ?? '').split(delimiter)) {
    if (dir === '') continue;
    const candidate = join(dir, process.platform === 'win32' ? `${name}.exe` : name);
    if (executable(candidate)) return candidate;
  }
  return undefined;
}

export function resolveNode(setting: string, env: NodeJS.ProcessEnv = process.env, hostExecutable = process.execPath, hostIsNode = !process.versions.electron): NodeExecutable {
  if (setting !== '') return { command: setting, env: {}, onPath: true };
  const found = findOnPath('node', env.PATH);
  if (found) return { command: found, env: {}, onPath: true };
  return { command: hostExecutable, env: hostIsNode ? {} : { ELECTRON_RUN_AS_NODE: '1' }, onPath: false };
}
