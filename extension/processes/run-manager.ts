/**
 * Starts, stops, resumes and reattaches to training runs. Each run gets a LogOutputChannel
 * ("vistool run: NAME") fed from the trainer's events and stderr; events also refresh the Runs
 * view, status bar and panels at once. A crash or a failure is reported with the trainer's last
 * stderr lines and a way to the log. In an untrusted workspace it launches nothing.
 *
 * A config with `"engine": "verl"` is started as a veRL run: the recipe `vistool config export
 * --to verl` makes is written into RUN_DIR/verl-recipe/, the exact command line is shown (and
 * must be confirmed), and its run.sh runs as a managed process like the trainer
 * (verl-launch.ts): its output in the run's channel, Stop, the Runs view following RUN_DIR.
 */
import { existsSync, readdirSync } from 'node:fs';
import { ExportRefused, prepareVerlExport, writeVerlFiles } from '../../env/cli/config-export.js';
import { basename, join, resolve } from 'node:path';
import * as vscode from 'vscode';
import { localFacts } from '../../env/config/environment-facts.js';
import { validateRunConfigText } from '../../env/config/validate-run-config.js';
import { Commands } from '../command-ids.js';
import { configBaseDir, workspaceRoots } from '../config/config-documents.js';
import type { PythonDiscovery } from '../python/python-discovery.js';
import type { TrainerEnvironment } from '../python/trainer-environment.js';
import type { RunStatusBar } from '../runs/run-status-bar.js';
import type { RunsModel } from '../runs/runs-model.js';
import { readJsonObject } from '../runs/read-json.js';
import { nodePathSetting, stopTimeoutMs } from '../settings.js';
import { resolveNode } from './node-executable.js';
import { describeTrainerEvent, type TrainerEvent } from './trainer-events.js';
import { planTrainerLaunch, type RunKind, type TrainerLaunchPlan } from './trainer-launch.js';
import { type TrainerExit, TrainerProcess } from './trainer-process.js';
import { resolveVerlPython } from '../python/verl-environment.js';
import { makeRecipeData } from '../python/verl-recipe-data.js';
import { missingParquet, planVerlLaunch, verlRecipeDirOf, verlStderrFileOf } from './verl-launch.js';

export interface StartOptions {
  /** What to do when the run directory already holds a run: ask (default), resume, or use a new folder. */
  ifExists?: 'ask' | 'resume' | 'new-folder';
  /** Stop after this many optimizer steps (the trainer's --max-steps). */
  maxSteps?: number;
  /** veRL: make a missing train/val parquet with the packaged converter without asking first. */
  makeVerlData?: boolean;
  /** veRL: write the recipe and its data and return the command, without starting it (the in-editor test). */
  verlDryRun?: boolean;
}

export interface StartedRun {
  runDir: string;
  pid: number;
  /** veRL: the command line run.sh is started with (with verlDryRun, what would have run; pid is then -1). */
  commandLine?: string;
  /** veRL: the interpreter it runs veRL with. */
  python?: string;
}

interface Tracked {
  trainer: TrainerProcess;
  channel: vscode.LogOutputChannel;
  name: string;
}

/** A checkpoint the trainer finished writing (it writes trainer_state.json last). */
export function hasCompleteCheckpoint(runDir: string): boolean {
  try {
    return readdirSync(join(runDir, 'checkpoints')).some((name) => name.startsWith('step-') && existsSync(join(runDir, 'checkpoints', name, 'trainer_state.json')));
  } catch {
    return false;
  }
}

export class RunManager implements vscode.Disposable {
  private readonly tracked = new Map<string, Tracked>();
  private readonly channels = new Map<string, vscode.LogOutputChannel>();
  private refreshTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly runs: RunsModel,
    private readonly statusBar: RunStatusBar,
    private readonly discovery: PythonDiscovery,
    private readonly environment: TrainerEnvironment,
  ) {}

  isTracked(runDir: string): boolean {
    return this.tracked.get(resolve(runDir))?.trainer.running ?? false;
  }

  /** Shows a run's channel if it has one; false when it has none (the caller opens the log file). */
  showLog(runDir: string): boolean {
    const channel = this.channels.get(resolve(runDir));
    channel?.show(true);
    return channel !== undefined;
  }

  /** The exit of a tracked run (tests and Stop wait on it). */
  whenExited(runDir: string): Promise<TrainerExit> | undefined {
    return this.tracked.get(resolve(runDir))?.trainer.whenExited();
  }

  private channelFor(runDir: string, name: string): vscode.LogOutputChannel {
    let channel = this.channels.get(runDir);
    if (!channel) {
      channel = vscode.window.createOutputChannel(`vistool run: ${name}`, { log: true });
      this.channels.set(runDir, channel);
    }
    return channel;
  }

  private refreshSoon(): void {
    if (this.refreshTimer) return;
    this.refreshTimer = setTimeout(() => {
      this.refreshTimer = undefined;
      void this.runs.refresh();
    }, 100);
  }

  private handlers(runDir: string, name: string, channel: vscode.LogOutputChannel, kind: RunKind = 'trainer') {
    return {
      onEvent: (event: TrainerEvent) => {
        const line = describeTrainerEvent(event);
        if (event.event === 'failed') channel.error(line);
        else if (event.event === 'warning') channel.warn(line);
        else channel.info(line);
        this.refreshSoon();
      },
      onStdout: (lines: string[]) => {
        for (const line of lines) channel.appendLine(line);
      },
      onStderr: (lines: string[]) => {
        for (const line of lines) channel.appendLine(line);
      },
      onExit: (exit: TrainerExit) => void this.reportExit(runDir, name, channel, exit, kind),
    };
  }

  private async reportExit(runDir: string, name: string, channel: vscode.LogOutputChannel, exit: TrainerExit, kind: RunKind): Promise<void> {
    const verl = kind === 'verl';
    channel.info(`${verl ? 'run.sh' : 'trainer'} exited (${exit.code !== null ? `code ${exit.code}` : exit.signal ? `signal ${exit.signal}` : 'exit code unknown'}); run status: ${exit.status}`);
    await this.runs.refresh();
    if (exit.status === 'failed') {
      const last = exit.lastStderr.slice(-3).join(' ⏎ ');
      // An interpreter without the trainer's packages fails at import: that is what Set Up fixes
      // (not for veRL's python, which `make verl-env` sets up).
      const missingPackages = !verl && exit.lastStderr.some((line) => /No module named '?(torch|transformers|accelerate|peft|jsonschema)\b/.test(line));
      const choice = await vscode.window.showErrorMessage(
        `vistool: run '${name}' failed: ${exit.error ?? 'see the log'}${last ? ` — last stderr: ${last}` : ''}`,
        ...(missingPackages ? ['Set Up Trainer Environment'] : []),
        'Show Log',
        'Open stderr Log',
      );
      if (choice === 'Set Up Trainer Environment') await vscode.commands.executeCommand(Commands.setUpTrainerEnvironment);
      if (choice === 'Show Log') channel.show(true);
      if (choice === 'Open stderr Log') await vscode.window.showTextDocument(vscode.Uri.file(verl ? verlStderrFileOf(runDir) : join(runDir, 'logs', 'trainer-stderr.log')));
    } else if (exit.status === 'finished') {
      const choice = await vscode.window.showInformationMessage(`vistool: run '${name}' finished.`, 'Open Dashboard');
      if (choice) await vscode.commands.executeCommand(Commands.openDashboard, runDir);
    } else if (exit.stopRequested) {
      if (verl) void vscode.window.showInformationMessage(`vistool: veRL run '${name}' stopped${exit.stopOutcome === 'killed' ? ' (killed after the timeout)' : ''}. veRL resumes from its own checkpoints (trainer.save_freq, trainer.resume_mode); Resume Run does not.`);
      else void vscode.window.showInformationMessage(`vistool: run '${name}' stopped (${exit.stopOutcome === 'killed' ? 'killed after the timeout; the newest complete checkpoint stays' : 'checkpoint saved'}). Resume Run continues it.`);
    }
  }

  /** Reattaches to every run whose trainer is alive but not followed (after a window reload). */
  async reattach(): Promise<number> {
    let attached = 0;
    for (const run of await this.runs.refresh()) {
      if ((run.state !== 'running' && run.state !== 'starting') || run.pid === null || this.isTracked(run.dir)) continue;
      const channel = this.channelFor(run.dir, run.name);
      channel.info(`reattached to the trainer (pid ${run.pid}) after a reload; earlier output is in ${join(run.dir, 'logs')}`);
      const kind: RunKind = (await readJsonObject(join(run.dir, 'run.json')))?.engine === 'verl' ? 'verl' : 'trainer';
      const trainer = await TrainerProcess.attach(run.dir, run.pid, this.handlers(run.dir, run.name, channel, kind), run.name, kind);
      this.tracked.set(run.dir, { trainer, channel, name: run.name });
      attached++;
    }
    return attached;
  }

  private refuseUntrusted(): boolean {
    if (vscode.workspace.isTrusted) return false;
    void vscode.window.showErrorMessage('vistool launches nothing in an untrusted workspace. Trust it first (Workspaces: Manage Workspace Trust).');
    return true;
  }

  private async pythonOrOffer(resource: vscode.Uri | undefined) {
    const python = await this.discovery.resolve(resource);
    if (python) return python;
    const choice = await vscode.window.showWarningMessage(
      'vistool: no Python interpreter with the trainer was found (vistool.pythonPath, the Python extension, the workspace .venv, or the environment Set Up Trainer Environment makes).',
      'Set Up Trainer Environment',
      'Select Python Interpreter',
    );
    if (choice === 'Set Up Trainer Environment') await vscode.commands.executeCommand(Commands.setUpTrainerEnvironment);
    if (choice === 'Select Python Interpreter') await vscode.commands.executeCommand(Commands.selectPythonInterpreter);
    return this.discovery.resolve(resource);
  }

  /** Start Run from a config file. Resolves once the trainer is spawned (undefined when nothing started). */
  async start(configUri: vscode.Uri, options: StartOptions = {}): Promise<StartedRun | undefined> {
    if (this.refuseUntrusted()) return undefined;
    const document = await vscode.workspace.openTextDocument(configUri);
    if (document.isDirty) await document.save();
    const baseDir = configBaseDir(configUri);
    const { problems, config } = validateRunConfigText(document.getText(), { baseDir, facts: localFacts(this.environment.cudaFacts(), process.env, process.env.HOME ?? '', workspaceRoots()) });
    const errors = problems.filter((p) => p.severity === 'error');
    if (errors.length > 0 || !config) {
      const first = errors[0];
      const choice = await vscode.window.showErrorMessage(
        `vistool: ${basename(configUri.fsPath)} has ${errors.length} error(s)${first ? ` — line ${first.start?.line ?? 1}: ${first.message}` : ''}. Fix them before starting.`,
        'Show Problems',
      );
      if (choice) await vscode.commands.executeCommand('workbench.actions.view.problems');
      return undefined;
    }
    let runDir = resolve(baseDir, String(config.output_dir));
    let outputDirOverride: string | undefined;
    let resume = false;
    const existing = this.runs.find(runDir) ?? ((await this.runs.refresh()), this.runs.find(runDir));
    if (existing && (existing.state === 'running' || existing.state === 'starting')) {
      void vscode.window.showErrorMessage(`vistool: run '${existing.name}' is already running in ${runDir}. Stop it first, or give the config another output_dir.`);
      return undefined;
    }
    const verl = config.engine === 'verl';
    if (existsSync(join(runDir, 'run.json')) || existsSync(join(runDir, 'metrics.jsonl'))) {
      // veRL keeps its own checkpoints (trainer.resume_mode); Resume here continues vistool's trainer only.
      const canResume = !verl && hasCompleteCheckpoint(runDir);
      let answer = options.ifExists ?? 'ask';
      if (answer === 'ask') {
        const picked = await vscode.window.showWarningMessage(
          `${runDir} already holds a run${canResume ? ' with a checkpoint' : ''}.`,
          { modal: true },
          ...(canResume ? ['Resume'] : []),
          'New Folder',
        );
        if (!picked) return undefined;
        answer = picked === 'Resume' ? 'resume' : 'new-folder';
      }
      if (answer === 'resume' && canResume) {
        resume = true;
      } else {
        let n = 2;
        while (existsSync(`${runDir}-${n}`)) n++;
        runDir = `${runDir}-${n}`;
        outputDirOverride = runDir;
      }
    }
    const name = typeof config.name === 'string' ? config.name : basename(runDir);
    if (verl) return this.launchVerl({ configUri, baseDir, runDir, name }, options);
    return this.launch({ configPath: configUri.fsPath, cwd: baseDir, runDir, resume, outputDirOverride, maxSteps: options.maxSteps, name, resource: configUri });
  }

  /** Resume Run: the trainer continues from the newest complete checkpoint, with the run's resolved config.json. */
  async resume(runDir: string, options: StartOptions = {}): Promise<StartedRun | undefined> {
    if (this.refuseUntrusted()) return undefined;
    const run = this.runs.find(runDir);
    if (run && (run.state === 'running' || run.state === 'starting')) {
      void vscode.window.showInformationMessage(`vistool: run '${run.name}' is already running.`);
      return undefined;
    }
    if (!hasCompleteCheckpoint(runDir)) {
      void vscode.window.showErrorMessage(`vistool: ${runDir} has no complete checkpoint to resume from (checkpoints/step-*/trainer_state.json). Start the run again instead.`);
      return undefined;
    }
    const configPath = join(runDir, 'config.json');
    if (!existsSync(configPath)) {
      void vscode.window.showErrorMessage(`vistool: ${runDir} has no config.json (the trainer writes the resolved config there when a run starts).`);
      return undefined;
    }
    const folder = vscode.workspace.getWorkspaceFolder(vscode.Uri.file(runDir));
    return this.launch({ configPath, cwd: folder?.uri.fsPath ?? runDir, runDir, resume: true, maxSteps: options.maxSteps, name: run?.name ?? basename(runDir), resource: vscode.Uri.file(runDir) });
  }

  private async launch(input: { configPath: string; cwd: string; runDir: string; resume: boolean; outputDirOverride?: string; maxSteps?: number; name: string; resource: vscode.Uri }): Promise<StartedRun | undefined> {
    const python = await this.pythonOrOffer(input.resource);
    if (!python) return undefined;
    const node = resolveNode(nodePathSetting());
    const plan = planTrainerLaunch({
      python: python.path,
      pythonEnv: python.env,
      trainerRoot: join(this.context.extensionPath, 'trainer'),
      node: node.onPath ? node.command : null,
      configPath: input.configPath,
      cwd: input.cwd,
      runDir: input.runDir,
      resume: input.resume,
      outputDirOverride: input.outputDirOverride,
      maxSteps: input.maxSteps,
      baseEnv: process.env,
    });
    const channel = this.channelFor(input.runDir, input.name);
    channel.info(`starting: ${plan.command} ${plan.args.join(' ')} (in ${plan.cwd}; events ${plan.eventsFile}; stderr ${plan.stderrFile})`);
    return this.spawnTracked(plan, input.runDir, input.name, channel);
  }

  /** A veRL run: the recipe into RUN_DIR/verl-recipe/, then its run.sh, once the user has seen the command line. */
  private async launchVerl(input: { configUri: vscode.Uri; baseDir: string; runDir: string; name: string }, options: StartOptions = {}): Promise<StartedRun | undefined> {
    const channel = this.channelFor(input.runDir, input.name);
    const recipeDir = verlRecipeDirOf(input.runDir);
    let prepared;
    try {
      prepared = await prepareVerlExport({ file: input.configUri.fsPath, out: recipeDir, baseDir: input.baseDir, nGpusPerNode: null, nnodes: 1 });
    } catch (err) {
      for (const line of err instanceof ExportRefused ? err.lines : []) channel.error(line);
      channel.error((err as Error).message);
      channel.show(true);
      void vscode.window.showErrorMessage(`vistool: ${(err as Error).message}`);
      return undefined;
    }
    for (const line of prepared.lines) channel.warn(line);
    await writeVerlFiles(recipeDir, prepared.files);
    channel.info(`veRL recipe (vistool config export --to verl) written to ${recipeDir}`);
    const node = resolveNode(nodePathSetting());
    const python = resolveVerlPython(this.context, [prepared.repoRoot, ...(workspaceRoots() ?? [])]);
    const plan = planVerlLaunch({ runDir: input.runDir, repoRoot: prepared.repoRoot, python, node: node.onPath ? node.command : null, baseEnv: process.env });
    const missing = missingParquet(recipeDir);
    if (missing.length > 0) {
      channel.warn(`${missing.join(' and ')} missing in ${recipeDir}: run.sh stops without them. They are made from ${prepared.repoRoot} with the veRL environment's python (${python}):`);
      for (const step of prepared.nextSteps) channel.warn(`  ${step}`);
      channel.show(true);
      const choice = options.makeVerlData ? 'Make Them' : await vscode.window.showErrorMessage(`vistool: the veRL run needs ${missing.join(' and ')} in ${recipeDir} first.`, 'Make Them', 'Copy Commands');
      if (choice === 'Copy Commands') await vscode.env.clipboard.writeText(prepared.nextSteps.join('\n'));
      if (choice !== 'Make Them' || !(await makeRecipeData({ extensionPath: this.context.extensionPath, python, repoRoot: prepared.repoRoot, steps: prepared.nextSteps, log: channel }))) return undefined;
    }
    if (options.verlDryRun) return { runDir: input.runDir, pid: -1, commandLine: plan.commandLine, python };
    const choice = await vscode.window.showInformationMessage(`vistool will start veRL with this command, in ${plan.cwd}:`, { modal: true, detail: plan.commandLine }, 'Start', 'Copy Command');
    if (choice === 'Copy Command') await vscode.env.clipboard.writeText(plan.commandLine);
    if (choice !== 'Start') return undefined;
    channel.info(`starting: ${plan.commandLine} (in ${plan.cwd}; stdout ${plan.eventsFile}; stderr ${plan.stderrFile})`);
    const started = await this.spawnTracked(plan, input.runDir, input.name, channel);
    return started && { ...started, commandLine: plan.commandLine, python };
  }

  private async spawnTracked(plan: TrainerLaunchPlan, runDir: string, name: string, channel: vscode.LogOutputChannel): Promise<StartedRun | undefined> {
    let trainer: TrainerProcess;
    try {
      trainer = await TrainerProcess.start(plan, this.handlers(runDir, name, channel, plan.kind ?? 'trainer'), name);
    } catch (err) {
      channel.error((err as Error).message);
      void vscode.window.showErrorMessage(`vistool: ${(err as Error).message}`);
      return undefined;
    }
    this.tracked.set(runDir, { trainer, channel, name });
    this.runs.track(runDir);
    this.statusBar.prefer(runDir);
    await this.runs.refresh();
    return { runDir, pid: trainer.pid };
  }

  /** Stop Run: SIGINT (checkpoint and exit), then kill after vistool.stopTimeoutSeconds. */
  async stop(runDir: string): Promise<TrainerExit | undefined> {
    const dir = resolve(runDir);
    let tracked = this.tracked.get(dir);
    if (!tracked?.trainer.running) {
      await this.reattach();
      tracked = this.tracked.get(dir);
    }
    if (!tracked?.trainer.running) {
      void vscode.window.showInformationMessage(`vistool: no trainer is running for ${dir}.`);
      return undefined;
    }
    const { trainer, name, channel } = tracked;
    channel.info('stop requested: SIGINT (the trainer saves a checkpoint and exits)');
    return vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `vistool: stopping run '${name}' (saving a checkpoint)…` }, () => trainer.stop(stopTimeoutMs()));
  }

  dispose(): void {
    clearTimeout(this.refreshTimer);
    // Trainers keep running: a reloaded window reattaches to them.
    for (const { trainer } of this.tracked.values()) trainer.dispose();
    for (const channel of this.channels.values()) channel.dispose();
  }
}
