/**
 * Runs a short-lived command (check-env, task generation, evaluation, pip) without a shell,
 * streaming its output line by line, and stops it when the caller cancels (SIGTERM, then
 * SIGKILL after a grace period). The long-lived trainer has its own class (trainer-process.ts).
 *
 * Editor-free (unit-tested under plain Node).
 */
import { spawn } from 'node:child_process';

export interface CommandSpec {
  command: string;
  args: string[];
  cwd?: string;
  env?: NodeJS.ProcessEnv;
}

export interface CommandResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  cancelled: boolean;
}

export interface CommandHooks {
  onStdoutLine?(line: string): void;
  onStderrLine?(line: string): void;
  signal?: AbortSignal;
  /** Grace period between SIGTERM and SIGKILL on cancel. */
  killAfterMs?: number;
}

function lineSplitter(onLine: ((line: string) => void) | undefined): { push(chunk: string): void; end(): void } {
  let rest = '';
  return {
    push(chunk) {
      rest += chunk;
      const lines = rest.split('\n');
      rest = lines.pop() ?? '';
      for (const line of lines) onLine?.(line.replace(/\r$/, ''));
    },
    end() {
      if (rest !== '') onLine?.(rest);
      rest = '';
    },
  };
}

export function runCommand(spec: CommandSpec, hooks: CommandHooks = {}): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    if (hooks.signal?.aborted) {
      resolve({ code: null, signal: null, stdout: '', stderr: '', cancelled: true });
      return;
    }
    const child = spawn(spec.command, spec.args, { cwd: spec.cwd, env: spec.env, stdio: ['ignore', 'pipe', 'pipe'], shell: false });
    let stdout = '';
    let stderr = '';
    let cancelled = false;
    let killTimer: NodeJS.Timeout | undefined;
    const out = lineSplitter(hooks.onStdoutLine);
    const err = lineSplitter(hooks.onStderrLine);
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      out.push(chunk);
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
      err.push(chunk);
    });
    const onAbort = () => {
      cancelled = true;
      child.kill('SIGTERM');
      killTimer = setTimeout(() => child.kill('SIGKILL'), hooks.killAfterMs ?? 3000);
    };
    hooks.signal?.addEventListener('abort', onAbort, { once: true });
    child.once('error', (error) => {
      hooks.signal?.removeEventListener('abort', onAbort);
      reject(new Error(`could not run ${spec.command} ${spec.args.join(' ')}: ${error.message}`));
    });
    child.once('close', (code, signal) => {
      clearTimeout(killTimer);
      hooks.signal?.removeEventListener('abort', onAbort);
      out.end();
      err.end();
      resolve({ code, signal, stdout, stderr, cancelled });
    });
  });
}
