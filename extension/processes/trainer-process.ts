/**
 * One trainer process: started detached (its own process group, output to files) or attached
 * to by pid after a window reload. It tails the events and stderr files, notices the exit, and
 * closes run.json when the trainer could not (crash, kill, failure before it wrote one). Stop is
 * SIGINT to the trainer (it saves a checkpoint and exits), then, after a timeout, SIGKILL to
 * its whole process group (the env server it started included).
 *
 * A veRL launch (plan.kind 'verl': a recipe's run.sh, verl-launch.ts) is managed alike, with three
 * differences: its stdout is veRL's plain log, passed on line by line (onStdout); Stop's SIGINT
 * goes to the whole process group (run.sh waits on veRL's trainer, which must get it itself; the
 * EXIT trap then stops the env server); and as nothing else writes run.json, the extension marks
 * it running at the start and finished when run.sh exits 0.
 *
 * Editor-free (unit-tested under plain Node with a stand-in trainer). It never runs anything
 * but the planned command, through spawn without a shell.
 */
import { spawn } from 'node:child_process';
import { mkdir, open } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { JsonlTail } from '../../env/runs/jsonl-tail.js';
import { TRAINER_COMMAND_MARK } from '../runs/run-state.js';
import { isProcessAlive } from '../../env/core/process-liveness.js';
import { closeRunJson, markRunStarting } from './run-json.js';
import { eventsFileOf, type RunKind, stderrFileOf, type TrainerLaunchPlan } from './trainer-launch.js';
import { parseTrainerEvent, type TrainerEvent } from './trainer-events.js';
import { VERL_COMMAND_MARK, verlStderrFileOf, verlStdoutFileOf } from './verl-launch.js';

export interface TrainerExit {
  /** Exit code when this process started the trainer; null when attached or killed by a signal. */
  code: number | null;
  signal: string | null;
  /** Whether Stop asked for it. */
  stopRequested: boolean;
  /** 'killed' when Stop had to SIGKILL it. */
  stopOutcome: 'interrupted' | 'killed' | null;
  /** run.json status once the exit was handled. */
  status: string;
  /** Why it failed, when it did: the failed event's error, or the exit code and last stderr line. */
  error: string | null;
  lastStderr: string[];
}

export interface TrainerHandlers {
  onEvent?(event: TrainerEvent): void;
  /** stdout lines that are not events (a veRL launch's log). */
  onStdout?(lines: string[]): void;
  onStderr?(lines: string[]): void;
  onExit?(exit: TrainerExit): void;
}

const TAIL_MS = 250;
const KEEP_STDERR_LINES = 200;

export class TrainerProcess {
  private readonly events: JsonlTail;
  private readonly stderr: JsonlTail;
  private readonly stderrLines: string[] = [];
  private timer: NodeJS.Timeout | undefined;
  private reading: Promise<void> = Promise.resolve();
  private failedError: string | null = null;
  private stopRequested = false;
  private stopOutcome: TrainerExit['stopOutcome'] = null;
  private exited: Promise<TrainerExit>;
  private resolveExit!: (exit: TrainerExit) => void;
  private finished = false;
  private disposed = false;
  private ownChild = false;

  private constructor(
    readonly runDir: string,
    readonly pid: number,
    private readonly handlers: TrainerHandlers,
    private readonly name: string | undefined,
    readonly kind: RunKind = 'trainer',
    tails?: { events: JsonlTail; stderr: JsonlTail },
  ) {
    this.events = tails?.events ?? new JsonlTail(kind === 'verl' ? verlStdoutFileOf(runDir) : eventsFileOf(runDir));
    this.stderr = tails?.stderr ?? new JsonlTail(kind === 'verl' ? verlStderrFileOf(runDir) : stderrFileOf(runDir));
    this.exited = new Promise((resolve) => (this.resolveExit = resolve));
  }

  /** Starts the planned trainer; resolves once it is spawned. */
  static async start(plan: TrainerLaunchPlan, handlers: TrainerHandlers, name?: string): Promise<TrainerProcess> {
    await mkdir(dirname(plan.eventsFile), { recursive: true });
    const stdout = await open(plan.eventsFile, 'a');
    const stderr = await open(plan.stderrFile, 'a');
    const kind = plan.kind ?? 'trainer';
    // What an earlier run left in the files is read past now, before the child exists: read past after
    // the spawn, it would also swallow whatever the child wrote meanwhile (its `started` event).
    const tails = { events: new JsonlTail(plan.eventsFile), stderr: new JsonlTail(plan.stderrFile) };
    await tails.events.read();
    const earlierStderr = (await tails.stderr.read()).lines.map((l) => l.text);
    let child;
    // A trainer that fails at once can exit before the awaits below finish: 'exit' is emitted
    // only once, so listen from the start and hand an early exit over when the object exists.
    const exit: { early?: { code: number | null; signal: NodeJS.Signals | null }; handler?: (code: number | null, signal: NodeJS.Signals | null) => void } = {};
    try {
      child = spawn(plan.command, plan.args, { cwd: plan.cwd, env: plan.env, detached: true, stdio: ['ignore', stdout.fd, stderr.fd], shell: false });
      child.once('exit', (code, exitSignal) => {
        if (exit.handler) exit.handler(code, exitSignal);
        else exit.early = { code, signal: exitSignal };
      });
      await new Promise<void>((resolve, reject) => {
        child!.once('spawn', resolve);
        child!.once('error', reject);
      });
    } catch (err) {
      throw new Error(`could not start the trainer (${plan.command} ${plan.args.join(' ')}): ${(err as Error).message}. Check the Python interpreter (vistool: Select Python Interpreter).`, { cause: err });
    } finally {
      // The child holds its own copies of the descriptors.
      await stdout.close();
      await stderr.close();
    }
    const pid = child.pid;
    if (pid === undefined) throw new Error(`the trainer (${plan.command}) started without a pid`);
    child.unref();
    if (kind === 'verl') await markRunStarting(plan.runDir, pid, name ?? basename(plan.runDir), 'running', { engine: 'verl', command: [plan.command, ...plan.args] });
    else await markRunStarting(plan.runDir, pid, name ?? basename(plan.runDir));
    const trainer = new TrainerProcess(plan.runDir, pid, handlers, name, kind, tails);
    trainer.ownChild = true;
    trainer.keepStderr(earlierStderr);
    exit.handler = (code, exitSignal) => void trainer.handleExit(code, exitSignal);
    if (exit.early) exit.handler(exit.early.code, exit.early.signal);
    trainer.schedule();
    return trainer;
  }

  /** Follows a trainer that is already running (after a window reload), from the current end of its files. */
  static async attach(runDir: string, pid: number, handlers: TrainerHandlers, name?: string, kind: RunKind = 'trainer'): Promise<TrainerProcess> {
    const trainer = new TrainerProcess(runDir, pid, handlers, name, kind);
    await trainer.skipExistingOutput();
    trainer.schedule();
    return trainer;
  }

  /** Resolves when the trainer has exited and run.json is final. */
  whenExited(): Promise<TrainerExit> {
    return this.exited;
  }

  get running(): boolean {
    return !this.finished;
  }

  lastStderr(count = 20): string[] {
    return this.stderrLines.slice(-count);
  }

  /**
   * SIGINT, then SIGKILL to the process group after `timeoutMs`. Resolves with how it ended:
   * 'interrupted' (it exited on its own after SIGINT) or 'killed'.
   */
  async stop(timeoutMs: number): Promise<TrainerExit> {
    if (this.finished) return this.exited;
    this.stopRequested = true;
    this.stopOutcome = 'interrupted';
    signal(this.kind === 'verl' ? -this.pid : this.pid, 'SIGINT');
    let timer: NodeJS.Timeout | undefined;
    const timedOut = await Promise.race([this.exited.then(() => false), new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), timeoutMs)))]);
    clearTimeout(timer);
    if (timedOut && !this.finished) {
      this.stopOutcome = 'killed';
      signal(-this.pid, 'SIGKILL');
      signal(this.pid, 'SIGKILL');
    }
    return this.exited;
  }

  /** Stops following (the trainer keeps running). */
  dispose(): void {
    this.disposed = true;
    clearTimeout(this.timer);
  }

  private async skipExistingOutput(): Promise<void> {
    await this.events.read();
    const { lines } = await this.stderr.read();
    this.keepStderr(lines.map((l) => l.text));
  }

  private schedule(): void {
    if (this.disposed || this.finished) return;
    this.timer = setTimeout(() => {
      this.reading = this.readOutput();
      void this.reading.then(
        () => {
          // Our own child reports its exit (with the code); an attached trainer is not our child,
          // so its exit shows only as a pid that is gone.
          if (!this.ownChild && !this.finished && !isProcessAlive(this.pid, this.kind === 'verl' ? VERL_COMMAND_MARK : TRAINER_COMMAND_MARK)) void this.handleExit(null, null);
          else this.schedule();
        },
        () => this.schedule(),
      );
    }, TAIL_MS);
  }

  private async readOutput(): Promise<void> {
    const events = await this.events.read().catch(() => ({ reset: false, lines: [] }));
    const plain: string[] = [];
    for (const { text } of events.lines) {
      const event = this.kind === 'verl' ? null : parseTrainerEvent(text);
      if (!event) {
        if (this.kind === 'verl') plain.push(text);
        continue;
      }
      if (event.event === 'failed' && typeof event.error === 'string') this.failedError = event.error;
      this.handlers.onEvent?.(event);
    }
    if (plain.length > 0) this.handlers.onStdout?.(plain);
    const stderr = await this.stderr.read().catch(() => ({ reset: false, lines: [] }));
    if (stderr.lines.length > 0) {
      const lines = stderr.lines.map((l) => l.text);
      this.keepStderr(lines);
      this.handlers.onStderr?.(lines);
    }
  }

  private keepStderr(lines: string[]): void {
    this.stderrLines.push(...lines.filter((l) => l.trim() !== ''));
    if (this.stderrLines.length > KEEP_STDERR_LINES) this.stderrLines.splice(0, this.stderrLines.length - KEEP_STDERR_LINES);
  }

  private async handleExit(code: number | null, exitSignal: NodeJS.Signals | null): Promise<void> {
    if (this.finished) return;
    this.finished = true;
    clearTimeout(this.timer);
    // Whatever the trainer left in its process group (the env server, after a hard crash) has no parent now.
    signal(-this.pid, 'SIGTERM');
    await this.reading.catch(() => undefined);
    await this.readOutput();
    const clean = code === 0;
    let error: string | null = null;
    let status: string;
    if (clean) {
      // The trainer writes its own final status; a veRL run.sh does not, and exits 0 when veRL's trainer finished.
      status = await closeRunJson(this.runDir, this.kind === 'verl' && !this.stopRequested ? 'finished' : 'stopped', null, this.name).catch(() => 'unknown');
    } else if (this.stopRequested) {
      status = await closeRunJson(this.runDir, 'stopped', this.stopOutcome === 'killed' ? 'killed after Stop: it did not exit within the timeout after SIGINT' : null, this.name).catch(() => 'unknown');
    } else {
      const last = this.stderrLines.at(-1);
      const how = code !== null ? `exited with code ${code}` : exitSignal ? `was killed by ${exitSignal}` : 'ended without writing a final status (killed, or out of memory?)';
      error = this.failedError ?? `the trainer ${how}${last ? `: ${last}` : ''}`;
      status = await closeRunJson(this.runDir, 'failed', error, this.name).catch(() => 'unknown');
    }
    const exit: TrainerExit = { code, signal: exitSignal, stopRequested: this.stopRequested, stopOutcome: this.stopOutcome, status, error: status === 'failed' ? (error ?? this.failedError) : null, lastStderr: this.lastStderr() };
    this.resolveExit(exit);
    this.handlers.onExit?.(exit);
  }
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // Already gone (or the group has no members left): nothing to stop.
  }
}
