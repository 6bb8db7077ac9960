/**
 * What Set Up veRL Environment runs, and how Check veRL Environment reads its answer.
 *
 * veRL 0.9.1 pins another transformers than the trainer, so it gets a venv of its own. The bridge
 * (verl_bridge/vistool_verl) and the trainer package are not installed into it: the .vsix ships
 * both, and run.sh puts them on PYTHONPATH from the extension's folder, so they always match the
 * extension. The venv holds veRL's dependencies only:
 * - with an NVIDIA GPU: `verl[vllm]==0.9.1` (vLLM, the CUDA torch and torchvision veRL pins), plus
 *   what the bridge needs beside veRL (verl_bridge/pyproject.toml less torch, transformers, verl);
 * - without one: the CPU torch the bridge pins, from the CPU index, then the bridge's pinned
 *   dependencies (veRL's trainer needs a GPU for vLLM; on CPU the bridge's converter, smoke and
 *   tests run).
 *
 * Editor-free (unit-tested under plain Node). Plans commands; never runs them.
 */
import { venvPython } from './python-environment.js';
import type { SetupStep } from './trainer-setup-plan.js';

export const VERL_VERSION = '0.9.1';

const packageName = (requirement: string) => requirement.split(/[=<>!~ [;]/)[0]?.toLowerCase() ?? '';

export function planVerlSetup(options: { basePython: string; venvDir: string; dependencies: string[]; hasNvidiaGpu: boolean; cpuTorchIndex: string }): SetupStep[] {
  const python = venvPython(options.venvDir);
  const pip = (title: string, args: string[]): SetupStep => ({ title, command: python, args: ['-m', 'pip', 'install', '--disable-pip-version-check', ...args] });
  const torch = options.dependencies.find((d) => packageName(d) === 'torch');
  const steps: SetupStep[] = [{ title: `Creating the venv ${options.venvDir}`, command: options.basePython, args: ['-m', 'venv', options.venvDir] }];
  if (options.hasNvidiaGpu) {
    const besides = options.dependencies.filter((d) => !['torch', 'transformers', 'verl'].includes(packageName(d)));
    steps.push(pip(`Installing veRL ${VERL_VERSION} with vLLM`, [`verl[vllm]==${VERL_VERSION}`, ...besides]));
  } else {
    if (!torch) throw new Error('verl_bridge/pyproject.toml pins no torch');
    steps.push(pip(`Installing ${torch} (CPU) from ${options.cpuTorchIndex}`, [torch, '--index-url', options.cpuTorchIndex]));
    steps.push(pip(`Installing veRL ${VERL_VERSION} and the bridge's dependencies`, options.dependencies.filter((d) => packageName(d) !== 'torch')));
  }
  return steps;
}

/**
 * Run by Check veRL Environment with PYTHONPATH = the extension's verl_bridge and trainer: imports
 * what a veRL run imports and prints one JSON line. The agent loop must register as vistool_agent.
 */
export const VERL_CHECK_SCRIPT = [
  'import json, sys',
  'report = {"python": sys.executable, "problems": []}',
  'try:',
  '    import verl, transfer_queue, ray',
  '    report.update(verl=verl.__version__, ray=ray.__version__)',
  '    import vistool_verl, vistool_verl.agent_loop, vistool_verl.reward, vistool_trainer',
  '    from verl.experimental.agent_loop.agent_loop import _agent_loop_registry',
  '    report.update(bridge=vistool_verl.__file__, trainer=vistool_trainer.__file__, agent_loop="vistool_agent" in _agent_loop_registry)',
  'except Exception as error:',
  '    report["problems"].append(f"{type(error).__name__}: {error}")',
  `if report.get("verl") not in (None, "${VERL_VERSION}"):`,
  `    report["problems"].append(f"veRL {report['verl']} is installed; the bridge is written for ${VERL_VERSION}")`,
  'print(json.dumps(report))',
].join('\n');

export interface VerlCheckReport {
  python: string;
  verl?: string;
  ray?: string;
  /** The vistool_verl package the interpreter imported (it should be the extension's). */
  bridge?: string;
  trainer?: string;
  agent_loop?: boolean;
  problems: string[];
}

/** The report line of VERL_CHECK_SCRIPT's output; null when there is none. */
export function parseVerlCheck(stdout: string): VerlCheckReport | null {
  for (const line of stdout.split('\n').reverse()) {
    if (!line.startsWith('{')) continue;
    try {
      const parsed = JSON.parse(line) as VerlCheckReport;
      if (typeof parsed.python === 'string' && Array.isArray(parsed.problems)) return parsed;
    } catch {
      // not the report line
    }
  }
  return null;
}
