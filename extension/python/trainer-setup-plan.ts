/**
 * What Set Up Trainer Environment runs: a venv, torch from the right index (CUDA when
 * `nvidia-smi` sees a GPU, CPU otherwise, or the index the user configured), then the trainer's
 * other dependencies as trainer/pyproject.toml pins them. The trainer package itself is not
 * installed: it runs from the extension's trainer/ folder on PYTHONPATH, so it always matches
 * the extension (and finds the env server bundle beside it).
 *
 * Editor-free (unit-tested under plain Node). Plans commands; never runs them.
 */
import { venvPython } from './python-environment.js';

export const CPU_TORCH_INDEX = 'https://download.pytorch.org/whl/cpu';
export const CUDA_TORCH_INDEX = 'https://download.pytorch.org/whl/cu128';

export interface SetupStep {
  title: string;
  command: string;
  args: string[];
}

/** The `dependencies = [...]` list of a pyproject.toml (the only TOML this needs to read). */
export function pyprojectDependencies(toml: string): string[] {
  const match = /^dependencies\s*=\s*\[([\s\S]*?)\]/m.exec(toml);
  if (!match?.[1]) throw new Error('trainer/pyproject.toml has no [project] dependencies = [...] list');
  return [...match[1].matchAll(/"([^"]+)"/g)].map((m) => m[1] ?? '').filter((d) => d !== '');
}

export function torchIndexFor(hasNvidiaGpu: boolean, configured: string): string {
  return configured !== '' ? configured : hasNvidiaGpu ? CUDA_TORCH_INDEX : CPU_TORCH_INDEX;
}

export function planTrainerSetup(options: { basePython: string; venvDir: string; dependencies: string[]; torchVersion: string; torchIndex: string }): SetupStep[] {
  const python = venvPython(options.venvDir);
  const others = options.dependencies.filter((d) => !/^torch\b/.test(d));
  return [
    { title: `Creating the venv ${options.venvDir}`, command: options.basePython, args: ['-m', 'venv', options.venvDir] },
    { title: `Installing torch ${options.torchVersion} from ${options.torchIndex}`, command: python, args: ['-m', 'pip', 'install', '--disable-pip-version-check', `torch==${options.torchVersion}`, '--index-url', options.torchIndex] },
    { title: `Installing ${others.map((d) => d.split(/[=<>!~ ]/)[0]).join(', ')}`, command: python, args: ['-m', 'pip', 'install', '--disable-pip-version-check', ...others] },
  ];
}

/** A step as a shell line, for the log (the commands are shown so a person can run them by hand). */
export function stepCommandLine(step: SetupStep): string {
  return [step.command, ...step.args].map((part) => (/^[\w@%+=:,./-]+$/.test(part) ? part : `'${part.replace(/'/g, `'\\''`)}'`)).join(' ');
}
