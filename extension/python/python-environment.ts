/**
 * Interpreters the trainer can run on, and how to run them as if their environment were
 * activated: a venv's bin/ first on PATH with VIRTUAL_ENV set, a conda environment's bin/ with
 * CONDA_PREFIX (what `activate` does for the variables that matter to torch and pip). The
 * candidates come in the order the extension prefers them (python-discovery.ts says why).
 *
 * Editor-free (unit-tested under plain Node).
 */
import { accessSync, constants, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { prependPath } from '../processes/trainer-launch.js';

export type PythonSource = 'setting' | 'python-extension' | 'workspace-venv' | 'managed-venv';

export interface PythonCandidate {
  path: string;
  source: PythonSource;
}

export const SOURCE_LABELS: Readonly<Record<PythonSource, string>> = {
  setting: 'vistool.pythonPath setting',
  'python-extension': "the Python extension's interpreter",
  'workspace-venv': 'the workspace .venv',
  'managed-venv': 'the environment made by Set Up Trainer Environment',
};

export function venvPython(venvDir: string): string {
  return process.platform === 'win32' ? join(venvDir, 'Scripts', 'python.exe') : join(venvDir, 'bin', 'python');
}

export function isExecutableFile(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The first candidate whose interpreter exists and can be executed. */
export function firstUsable(candidates: readonly PythonCandidate[], usable: (path: string) => boolean = isExecutableFile): PythonCandidate | undefined {
  return candidates.find((candidate) => candidate.path !== '' && usable(candidate.path));
}

/** Variables that activate the interpreter's environment, when it lives in a venv or conda env. */
export function activationVariables(python: string, baseEnv: NodeJS.ProcessEnv): Record<string, string> {
  const bin = dirname(python);
  const prefix = dirname(bin);
  if (existsSync(join(prefix, 'pyvenv.cfg'))) return { VIRTUAL_ENV: prefix, PATH: prependPath(baseEnv.PATH, bin) };
  if (existsSync(join(prefix, 'conda-meta'))) return { CONDA_PREFIX: prefix, PATH: prependPath(baseEnv.PATH, bin) };
  return {};
}
