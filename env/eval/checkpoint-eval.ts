/**
 * `checkpoint:<path>` policies: the Python trainer serves the checkpoint as an OpenAI-compatible
 * chat server on 127.0.0.1 (`python -m vistool_trainer serve-policy --checkpoint P --port 0`),
 * because the weights, the tokenizer and the generation code live there; the eval then talks to
 * it through the same harness as any `openai:` model (env/cli/eval.ts). This module starts that
 * server, waits for its `{"event": "listening", ...}` line and stops it again, and reads what an
 * checkpoint's step. Its run config, which decides what the policy reads, is eval-settings.ts's.
 * Never imports or runs Python code in process; the trainer is a child process.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';

/** The repository root: the folder above this module (source or bundle) that holds trainer/. */
export function repositoryRoot(): string {
  let dir = __dirname;
  for (let i = 0; i < 6; i++) {
    if (existsSync(join(dir, 'trainer', 'vistool_trainer', '__main__.py'))) return dir;
    dir = dirname(dir);
  }
  return process.cwd();
}

export function defaultPython(): string {
  if (process.env.VISTOOL_PYTHON) return process.env.VISTOOL_PYTHON;
  const venv = join(repositoryRoot(), '.venv', 'bin', 'python');
  return existsSync(venv) ? venv : 'python3';
}

/** The optimizer step of a checkpoint: trainer_state.json's global_step, else the folder name step-NNNNNN. */
export async function checkpointStep(checkpoint: string): Promise<number | null> {
  try {
    const state = JSON.parse(await readFile(join(checkpoint, 'trainer_state.json'), 'utf8')) as { global_step?: unknown };
    if (typeof state.global_step === 'number') return state.global_step;
  } catch {
    // no state file: fall back to the folder name
  }
  const match = /step-(\d+)$/u.exec(basename(resolve(checkpoint)));
  return match ? Number(match[1]) : null;
}

export interface PolicyServer {
  /** Base URL ending in /v1. */
  url: string;
  /** The model name the server answers to (`<run>/<step folder>`). */
  model: string;
  /** SIGTERM, then waits for the process to exit. Safe to call twice. */
  close(): Promise<void>;
}

export interface PolicyServerOptions {
  /** The run config the checkpoint was trained with (serve-policy's --config). */
  trainerConfig?: string;
  /** cpu, cuda or auto (default auto). */
  device?: string;
}

/**
 * Starts `python -m vistool_trainer serve-policy` for a checkpoint in the repository root and
 * resolves once it prints its `listening` event; rejects with the trainer's own error on a
 * `failed` event, an exit before listening, or an abort (the process is stopped first).
 */
export async function startPolicyServer(
  checkpoint: string,
  python: string,
  signal: AbortSignal | undefined,
  progress: (line: string) => void,
  options: PolicyServerOptions = {},
): Promise<PolicyServer> {
  const folder = resolve(checkpoint);
  if (!existsSync(folder)) throw new Error(`checkpoint folder ${folder} does not exist; give checkpoint:<run>/checkpoints/step-NNNNNN`);
  const args = ['-m', 'vistool_trainer', 'serve-policy', '--checkpoint', folder, '--port', '0', '--device', options.device ?? 'auto'];
  if (options.trainerConfig !== undefined) args.push('--config', resolve(options.trainerConfig));
  progress(`eval: serving ${folder}: ${python} ${args.join(' ')}`);
  const child = spawn(python, args, { cwd: repositoryRoot(), stdio: ['ignore', 'pipe', 'pipe'] });
  const tail: string[] = [];
  const remember = (line: string) => {
    tail.push(line);
    if (tail.length > 20) tail.shift();
  };
  createInterface({ input: child.stderr }).on('line', (line) => {
    remember(line);
    progress(`trainer: ${line}`);
  });
  // Attached at spawn, so an exit before anyone awaits it is not missed.
  const exited = new Promise<[number | null, NodeJS.Signals | null]>((resolveExit) => {
    child.once('close', (code, sig) => resolveExit([code, sig]));
    child.once('error', () => resolveExit([null, null]));
  });
  let closing: Promise<void> | null = null;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    })();
    return closing;
  };

  const ready = new Promise<{ url: string; model: string }>((resolveReady, reject) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      let event: { event?: unknown; url?: unknown; model?: unknown; error?: unknown };
      try {
        event = JSON.parse(line) as typeof event;
      } catch {
        remember(line); // stdout is JSON events; anything else is kept for the error message
        return;
      }
      if (event.event === 'listening' && typeof event.url === 'string' && typeof event.model === 'string') resolveReady({ url: event.url, model: event.model });
      else if (event.event === 'failed') reject(new Error(`the trainer could not serve ${folder}: ${String(event.error)}`));
    });
    child.once('error', (err) => reject(new Error(`cannot start ${python} (${err.message}); set VISTOOL_PYTHON or --python to an interpreter with vistool_trainer installed`)));
    void exited.then(([code, sig]) =>
      reject(new Error(`the trainer's serve-policy ${sig ? `was killed by ${sig}` : `exited with ${code}`} before listening; its last output:\n${tail.slice(-10).join('\n')}`)),
    );
  });
  const aborted = new Promise<never>((_, reject) => {
    if (signal?.aborted) reject(new Error('checkpoint eval interrupted while the policy server was starting'));
    signal?.addEventListener('abort', () => reject(new Error('checkpoint eval interrupted while the policy server was starting')), { once: true });
  });
  try {
    const { url, model } = await Promise.race([ready, aborted]);
    return { url, model, close };
  } catch (err) {
    await close();
    throw err;
  } finally {
    aborted.catch(() => undefined);
  }
}
