/**
 * The trainer's environment report (`python -m vistool_trainer check-env --json`, see
 * trainer/vistool_trainer/run/environment_check.py): read from its output, and said in lines for
 * the output channel — versions, CUDA devices, and the command that fixes each problem.
 *
 * Editor-free (unit-tested under plain Node).
 */
import { cudaFactsFromCheckEnv, type CudaFacts } from '../../env/config/environment-facts.js';

export interface PackageStatus {
  name: string;
  installed: string | null;
  pinned: string | null;
  ok: boolean;
  note: string;
}

export interface CheckEnvReport {
  ok: boolean;
  python: string;
  platform: string;
  packages: PackageStatus[];
  optional: PackageStatus[];
  cuda_available: boolean;
  cuda_devices: { index: number; name: string; memory_gib: number; bf16: boolean }[];
  node: string | null;
  env_server_bundle: string | null;
  problems: string[];
}

/** The report from check-env's stdout (its last line is the JSON object). */
export function parseCheckEnvOutput(stdout: string): CheckEnvReport | null {
  const line = stdout.trim().split('\n').at(-1) ?? '';
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  const report = value as Partial<CheckEnvReport>;
  if (typeof report.ok !== 'boolean' || !Array.isArray(report.packages) || !Array.isArray(report.problems)) return null;
  return { optional: [], cuda_devices: [], cuda_available: false, node: null, env_server_bundle: null, python: '?', platform: '?', ...report } as CheckEnvReport;
}

export function cudaFactsOf(report: CheckEnvReport | null): CudaFacts {
  return report ? cudaFactsFromCheckEnv(report) : { cudaDevices: null, bf16: null };
}

export function reportLines(report: CheckEnvReport, python: string): string[] {
  const lines = [`Trainer environment: ${python} (Python ${report.python} on ${report.platform})`];
  for (const pkg of [...report.packages, ...report.optional]) {
    const state = pkg.installed ? `${pkg.installed}${pkg.pinned && !pkg.installed.startsWith(pkg.pinned) ? ` (tested with ${pkg.pinned})` : ''}` : 'MISSING';
    lines.push(`  ${pkg.name.padEnd(13)} ${state}${pkg.installed ? '' : pkg.note ? ` — ${pkg.note}` : ''}`);
  }
  if (report.cuda_available && report.cuda_devices.length > 0) {
    for (const device of report.cuda_devices) lines.push(`  cuda:${device.index} ${device.name}, ${device.memory_gib} GiB, bf16 ${device.bf16 ? 'yes' : 'no'}`);
  } else {
    lines.push('  no CUDA device: runs use the CPU (fine for the micro model)');
  }
  lines.push(`  node ${report.node ?? 'missing'}; env server bundle ${report.env_server_bundle ?? 'missing'}`);
  for (const problem of report.problems) lines.push(`  problem: ${problem}`);
  lines.push(report.ok ? 'ready' : 'not ready: fix the problems above (or run "vistool: Set Up Trainer Environment")');
  return lines;
}

/** One line for a notification: `torch 2.13.0 · transformers 5.18.0 · peft 0.21.2 · 2 CUDA devices`. */
export function reportSummary(report: CheckEnvReport): string {
  const versions = ['torch', 'transformers', 'peft'].map((name) => {
    const pkg = report.packages.find((p) => p.name === name);
    return `${name} ${pkg?.installed ?? 'missing'}`;
  });
  const cuda = report.cuda_available && report.cuda_devices.length > 0 ? `${report.cuda_devices.length} CUDA device${report.cuda_devices.length === 1 ? '' : 's'}` : 'CPU only';
  return [...versions, cuda].join(' · ');
}
