/**
 * How the .vsix's Python packages run without being installed: the veRL bridge (verl_bridge/) and
 * the trainer package (trainer/) go on PYTHONPATH from the extension's folder, so the code that
 * runs is always the extension's own. Editor-free.
 */
import { join } from 'node:path';
import { prependPath } from '../processes/trainer-launch.js';

/** PYTHONPATH entries that make the extension's bridge and trainer importable. */
export function bridgePythonPath(extensionPath: string): string[] {
  return [join(extensionPath, 'verl_bridge'), join(extensionPath, 'trainer')];
}

/** `base` with those entries first on PYTHONPATH, unbuffered output, and not Electron's "run as node". */
export function bridgeEnv(extensionPath: string, base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...base, PYTHONPATH: prependPath(base.PYTHONPATH, ...bridgePythonPath(extensionPath)), PYTHONUNBUFFERED: '1' };
  delete env.ELECTRON_RUN_AS_NODE;
  return env;
}
