/**
 * The commands that launch processes: Start, Stop and Resume Run, Generate Tasks, Evaluate
 * Checkpoint. Each works from the palette (asking what it needs), from the views (with the item)
 * and from code (with arguments, which the in-editor tests use).
 */
import { existsSync, readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, isAbsolute, join, relative } from 'node:path';
import { generationJobs } from '../../env/config/data-gen-args.js';
import * as vscode from 'vscode';
import { Commands } from '../command-ids.js';
import { CONFIG_GLOB } from '../configs/configs-tree.js';
import type { DatasetsTreeProvider } from '../datasets/datasets-tree.js';
import { vistoolLog } from '../output.js';
import type { PythonDiscovery } from '../python/python-discovery.js';
import { pickRun } from '../runs/run-argument.js';
import { isResumable } from '../runs/run-state.js';
import type { RunsModel } from '../runs/runs-model.js';
import { nodePathSetting } from '../settings.js';
import { runCommand } from './command-runner.js';
import { resolveNode } from './node-executable.js';
import type { RunManager, StartOptions } from './run-manager.js';
import { describeTrainerEvent, parseTrainerEvent } from './trainer-events.js';
import { prependPath } from './trainer-launch.js';

async function configFromArgument(arg: unknown): Promise<vscode.Uri | undefined> {
  if (arg instanceof vscode.Uri) return arg;
  const active = vscode.window.activeTextEditor?.document.uri;
  if (active?.path.endsWith('.vistool.json')) return active;
  const configs = await vscode.workspace.findFiles(CONFIG_GLOB, '{**/node_modules/**,**/.venv/**}', 200);
  if (configs.length === 0) {
    const choice = await vscode.window.showInformationMessage('vistool: no run config (*.vistool.json) in this workspace.', 'New Run Config');
    if (choice) await vscode.commands.executeCommand(Commands.newRunConfig);
    return undefined;
  }
  if (configs.length === 1) return configs[0];
  const picked = await vscode.window.showQuickPick(configs.map((uri) => ({ label: vscode.workspace.asRelativePath(uri), uri })), { title: 'vistool: run config to start' });
  return picked?.uri;
}

export interface GenerateTasksOptions {
  kind: string;
  n: number;
  seed: number;
  /** Output folder; relative paths are relative to the first workspace folder. */
  out: string;
  difficulty?: string;
  imageSize?: string;
}

/** Generate Tasks like a run config's: its data.generate, training split in OUT/train and held-out in OUT/eval. */
export interface GenerateFromConfigOptions {
  config: string;
  out: string;
}

export function registerProcessCommands(context: vscode.ExtensionContext, runs: RunsModel, manager: RunManager, discovery: PythonDiscovery, datasets: DatasetsTreeProvider): void {
  const log = () => vistoolLog(context);
  const workspaceDir = () => vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;

  /** One `vistool data gen` run with progress and cancel; the tasks.jsonl it wrote, or undefined (cancelled or failed, and said so). */
  async function runDataGen(folder: string, args: string[], outDir: string, title: string): Promise<string | undefined> {
    const node = resolveNode(nodePathSetting());
    const command = [join(context.extensionPath, 'bin', 'vistool.js'), 'data', 'gen', ...args, '--out', outDir];
    log().info(`$ ${node.command} ${command.join(' ')}`);
    const result = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title, cancellable: true },
      (progress, token) => {
        const abort = new AbortController();
        token.onCancellationRequested(() => abort.abort());
        return runCommand(
          { command: node.command, args: command, cwd: folder, env: { ...process.env, ...node.env } },
          { signal: abort.signal, onStdoutLine: (l) => log().info(l), onStderrLine: (l) => {
            log().info(l);
            const percent = /(\d+)%/.exec(l);
            if (percent) progress.report({ message: `${percent[1]}%` });
          } },
        );
      },
    );
    datasets.refresh();
    if (result.cancelled) return undefined;
    if (result.code !== 0) {
      void vscode.window.showErrorMessage(`vistool: task generation failed: ${result.stderr.trim().split('\n').at(-1) ?? `exit ${result.code}`}`, 'Show Log').then((c) => c && log().show(true));
      return undefined;
    }
    return join(outDir, 'tasks.jsonl');
  }

  /** A run config's own tasks (its data.generate, both splits), so what is made by hand is what the run would make. */
  async function generateFromConfig(folder: string, options: GenerateFromConfigOptions): Promise<string | undefined> {
    let plan: ReturnType<typeof generationJobs>;
    try {
      plan = generationJobs(await readFile(options.config, 'utf8'), options.out);
    } catch (err) {
      void vscode.window.showErrorMessage(`vistool: cannot generate tasks from ${options.config}: ${(err as Error).message}`);
      return undefined;
    }
    const made: string[] = [];
    for (const job of plan.jobs) {
      const outDir = isAbsolute(job.out) ? job.out : join(folder, job.out);
      const file = await runDataGen(folder, job.args, outDir, `vistool: generating ${plan.name}'s ${job.split === 'train' ? 'training' : 'held-out'} tasks`);
      if (!file) return undefined;
      made.push(file);
    }
    const shown = made.map((f) => relative(folder, f) || f);
    void vscode.window.showInformationMessage(`vistool: ${plan.name}'s tasks (${plan.description}) in ${shown.join(' and ')}. To train on exactly these, set data.train and data.eval to them.`);
    return made[0];
  }

  async function generateTasks(given?: GenerateTasksOptions | GenerateFromConfigOptions): Promise<string | undefined> {
    if (!vscode.workspace.isTrusted) {
      void vscode.window.showErrorMessage('vistool launches nothing in an untrusted workspace. Trust it first.');
      return undefined;
    }
    const folder = workspaceDir();
    if (!folder) {
      void vscode.window.showErrorMessage('vistool: open a folder first; the tasks are written into it.');
      return undefined;
    }
    if (given && 'config' in given) return generateFromConfig(folder, given);
    let options = given;
    if (!options) {
      // The run configs' own data settings come first: the generator's defaults look nothing like a config's tasks.
      const configs = (await vscode.workspace.findFiles(CONFIG_GLOB, '{**/node_modules/**,**/.venv*/**,**/.git/**}', 50)).sort((a, b) => a.fsPath.localeCompare(b.fsPath));
      if (configs.length > 0) {
        const items = await Promise.all(configs.map(async (uri) => {
          const plan = await readFile(uri.fsPath, 'utf8').then((text) => generationJobs(text, ''), () => null).catch(() => null);
          return { label: `$(settings-gear) ${basename(uri.fsPath)}`, description: plan ? plan.description : 'cannot be read: fix it first', detail: relative(folder, uri.fsPath), uri, plan };
        }));
        const custom = { label: '$(edit) Choose kind, count and folder…', description: 'the generator\'s own options', detail: undefined, uri: undefined, plan: null };
        const picked = await vscode.window.showQuickPick([...items.filter((i) => i.plan !== null), custom], { title: 'vistool: Generate Tasks: like which run config?', matchOnDetail: true });
        if (!picked) return undefined;
        if (picked.uri && picked.plan) {
          const out = await vscode.window.showInputBox({ title: 'vistool: Generate Tasks: output folder', value: `data/${picked.plan.name}`, prompt: `relative to ${folder}; train/ and eval/ go inside it, and data sets there are replaced` });
          if (!out) return undefined;
          return generateFromConfig(folder, { config: picked.uri.fsPath, out: out.trim() });
        }
      }
      const kind = await vscode.window.showQuickPick(['table', 'vbar', 'hbar', 'grouped', 'line', 'mixed', 'geometry'], { title: 'vistool: Generate Tasks (1/3): kind' });
      if (!kind) return undefined;
      const count = await vscode.window.showInputBox({ title: 'vistool: Generate Tasks (2/3): how many', value: '400', validateInput: (v) => (/^[1-9]\d*$/.test(v.trim()) ? null : 'a whole number of tasks') });
      if (!count) return undefined;
      const out = await vscode.window.showInputBox({ title: 'vistool: Generate Tasks (3/3): output folder', value: `data/${kind}-${count.trim()}/train`, prompt: `relative to ${folder}; a data set there is replaced` });
      if (!out) return undefined;
      options = { kind, n: Number(count.trim()), seed: 1, out: out.trim() };
    }
    const outDir = isAbsolute(options.out) ? options.out : join(folder, options.out);
    const args = ['--kind', options.kind, '--n', String(options.n), '--seed', String(options.seed)];
    if (options.difficulty) args.push('--difficulty', options.difficulty);
    if (options.imageSize) args.push('--image-size', options.imageSize);
    const file = await runDataGen(folder, args, outDir, `vistool: generating ${options.n} ${options.kind} tasks`);
    if (file) void vscode.window.showInformationMessage(`vistool: ${options.n} ${options.kind} tasks in ${relative(folder, outDir) || outDir}.`);
    return file;
  }

  async function evaluateCheckpoint(arg?: unknown, checkpointArg?: string): Promise<Record<string, unknown> | undefined> {
    if (!vscode.workspace.isTrusted) {
      void vscode.window.showErrorMessage('vistool launches nothing in an untrusted workspace. Trust it first.');
      return undefined;
    }
    const run = await pickRun(runs, arg, 'evaluate');
    if (!run) return undefined;
    const checkpoints = (() => {
      try {
        return readdirSync(join(run.dir, 'checkpoints')).filter((n) => n.startsWith('step-') && existsSync(join(run.dir, 'checkpoints', n, 'trainer_state.json'))).sort().reverse();
      } catch {
        return [];
      }
    })();
    if (checkpoints.length === 0) {
      void vscode.window.showErrorMessage(`vistool: run '${run.name}' has no complete checkpoint to evaluate.`);
      return undefined;
    }
    let checkpoint = checkpointArg;
    if (!checkpoint) {
      const picked = checkpoints.length === 1 ? checkpoints[0] : await vscode.window.showQuickPick(checkpoints, { title: `vistool: checkpoint of '${run.name}' to evaluate` });
      if (!picked) return undefined;
      checkpoint = join(run.dir, 'checkpoints', picked);
    }
    const python = await discovery.resolve(vscode.Uri.file(run.dir));
    if (!python) {
      void vscode.window.showErrorMessage('vistool: no Python interpreter for the trainer; run Set Up Trainer Environment or Select Python Interpreter.');
      return undefined;
    }
    const args = ['-m', 'vistool_trainer', 'eval', '--config', join(run.dir, 'config.json'), '--checkpoint', checkpoint];
    const env = { ...process.env, ...python.env, PYTHONPATH: prependPath(process.env.PYTHONPATH, join(context.extensionPath, 'trainer')), PYTHONUNBUFFERED: '1' };
    log().info(`$ ${python.path} ${args.join(' ')}`);
    let results: Record<string, unknown> | undefined;
    const outcome = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `vistool: evaluating ${checkpoint}`, cancellable: true },
      (_progress, token) => {
        const abort = new AbortController();
        token.onCancellationRequested(() => abort.abort());
        return runCommand({ command: python.path, args, cwd: vscode.workspace.getWorkspaceFolder(vscode.Uri.file(run.dir))?.uri.fsPath ?? run.dir, env }, {
          signal: abort.signal,
          onStdoutLine: (line) => {
            const event = parseTrainerEvent(line);
            if (event?.event === 'eval') results = event;
            log().info(event ? describeTrainerEvent(event) : line);
          },
          onStderrLine: (line) => log().info(line),
        });
      },
    );
    if (outcome.cancelled) return undefined;
    if (outcome.code !== 0 || !results) {
      void vscode.window.showErrorMessage(`vistool: evaluation failed: ${outcome.stderr.trim().split('\n').at(-1) ?? `exit ${outcome.code}`}`, 'Show Log').then((c) => c && log().show(true));
      return undefined;
    }
    const evaluated = results;
    const summary = Object.entries(evaluated).filter(([k, v]) => k.startsWith('eval/') && typeof v === 'number').map(([k, v]) => `${k.slice(5)} ${(v as number).toFixed(3)}`).join(', ');
    void vscode.window.showInformationMessage(`vistool: ${run.name} @ ${checkpoint.split('/').at(-1)}: ${summary}`, 'Show Log').then((c) => c && log().show(true));
    return evaluated;
  }

  context.subscriptions.push(
    vscode.commands.registerCommand(Commands.startRun, async (arg?: unknown, options?: StartOptions) => {
      const uri = await configFromArgument(arg);
      return uri ? manager.start(uri, options) : undefined;
    }),
    vscode.commands.registerCommand(Commands.stopRun, async (arg?: unknown) => {
      const run = await pickRun(runs, arg, 'stop', (r) => r.state === 'running' || r.state === 'starting', 'Stop needs a running run.');
      return run ? manager.stop(run.dir) : undefined;
    }),
    vscode.commands.registerCommand(Commands.resumeRun, async (arg?: unknown, options?: StartOptions) => {
      const run = await pickRun(runs, arg, 'resume', (r) => isResumable(r.state), 'Resume needs a run that stopped, was interrupted, paused or failed.');
      return run ? manager.resume(run.dir, options) : undefined;
    }),
    vscode.commands.registerCommand(Commands.generateTasks, (options?: GenerateTasksOptions | GenerateFromConfigOptions) => generateTasks(options)),
    vscode.commands.registerCommand(Commands.evaluateCheckpoint, (arg?: unknown, checkpoint?: string) => evaluateCheckpoint(arg, checkpoint)),
  );
}
