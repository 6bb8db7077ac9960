/**
 * What the checks know about the machine a run would start on: CUDA devices and bf16 support
 * (from the trainer's `check-env --json` report, when one was run), which environment
 * variables are set, and what exists on disk. Unknown facts are null and the checks that need
 * them stay quiet rather than guess.
 */
import { closeSync, openSync, readSync, realpathSync, statSync } from 'node:fs';

export interface EnvironmentFacts {
  /** CUDA devices the trainer's check-env found; null when no report is at hand. */
  cudaDevices: number | null;
  /** Whether every CUDA device supports bfloat16; null when unknown or there is no device. */
  bf16: boolean | null;
  /** Names of environment variables that are set to something non-empty. */
  envVars: ReadonlySet<string>;
  /** 'file', 'dir' or null for an absolute path. */
  pathKind(path: string): 'file' | 'dir' | null;
  /** The Hugging Face hub cache folder (models--org--name live inside). */
  huggingFaceCache: string | null;
  /** The first `count` lines of a file (from its first 64 KiB); null when unreadable. Absent: not checked. */
  firstLines?(path: string, count: number): string[] | null;
  /** A path's real path (links followed), null when it does not exist. Absent: paths compared as written. */
  realPath?(path: string): string | null;
  /** The folders a run's data is expected in (the workspace); null or absent: not checked. */
  workspaceRoots?: readonly string[] | null;
}

const HEAD_BYTES = 64 * 1024;

/** The first `count` lines of a file, read from its first 64 KiB only (a data file can be huge). */
export function diskFirstLines(path: string, count: number): string[] | null {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const buffer = Buffer.alloc(HEAD_BYTES);
    const read = readSync(fd, buffer, 0, HEAD_BYTES, 0);
    const lines = buffer.subarray(0, read).toString('utf8').split('\n');
    // A last line cut at 64 KiB is not a line of the file.
    if (read === HEAD_BYTES) lines.pop();
    return lines.slice(0, count);
  } catch {
    return null;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

export function diskPathKind(path: string): 'file' | 'dir' | null {
  try {
    const info = statSync(path);
    return info.isDirectory() ? 'dir' : info.isFile() ? 'file' : null;
  } catch {
    return null;
  }
}

export interface CudaFacts {
  cudaDevices: number | null;
  bf16: boolean | null;
}

/** CUDA facts from `python -m vistool_trainer check-env --json`; nulls for anything unreadable. */
export function cudaFactsFromCheckEnv(report: unknown): CudaFacts {
  if (typeof report !== 'object' || report === null) return { cudaDevices: null, bf16: null };
  const { cuda_available: available, cuda_devices: devices } = report as { cuda_available?: unknown; cuda_devices?: unknown };
  if (typeof available !== 'boolean' || !Array.isArray(devices)) return { cudaDevices: null, bf16: null };
  const count = available ? devices.length : 0;
  const bf16 = count === 0 ? null : devices.every((d) => typeof d === 'object' && d !== null && (d as { bf16?: unknown }).bf16 === true);
  return { cudaDevices: count, bf16 };
}

export function huggingFaceCacheFrom(env: Record<string, string | undefined>, home: string): string {
  if (env.HF_HUB_CACHE) return env.HF_HUB_CACHE;
  if (env.HF_HOME) return `${env.HF_HOME}/hub`;
  return `${env.XDG_CACHE_HOME || `${home}/.cache`}/huggingface/hub`;
}

/** Facts for this process: its environment variables and disk, with optional CUDA facts. */
export function localFacts(
  cuda: CudaFacts = { cudaDevices: null, bf16: null },
  env: Record<string, string | undefined> = process.env,
  home = process.env.HOME ?? '',
  workspaceRoots: readonly string[] | null = null,
): EnvironmentFacts {
  return {
    ...cuda,
    firstLines: diskFirstLines,
    realPath: (path: string) => {
      try {
        return realpathSync(path);
      } catch {
        return null;
      }
    },
    workspaceRoots,
    envVars: new Set(Object.entries(env).filter(([, v]) => v !== undefined && v !== '').map(([k]) => k)),
    pathKind: diskPathKind,
    huggingFaceCache: home || env.HF_HUB_CACHE || env.HF_HOME ? huggingFaceCacheFrom(env, home) : null,
  };
}
