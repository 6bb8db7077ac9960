/**
 * Generate Tasks: `vistool data gen` run from the editor with progress and cancel, either like a
 * run config's own data (its data.generate, both splits) or with a kind, count and folder chosen
 * by hand. The palette asks; code and the in-editor tests pass the options.
 */
import { readFile } from 'node:fs/promises';
import { basename, isAbsolute, join, relative } from 'node:path';
import * as vscode from 'vscode';
import { generationJobs } from '../../env/config/data-gen-args.js';
import { CONFIG_GLOB } from '../configs/configs-tree.js';
import type { DatasetsTreeProvider } from '../datasets/datasets-tree.js';
import { vistoolLog } from '../output.js';
import { nodePathSetting } from '../settings.js';
import { runCommand } from './command-runner.js';
import { resolveNode } from './node-executable.js';

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

const KINDS = ['table', 'vbar', 'hbar', 'grouped', 'line', 'mixed', 'geometry', 'search'];

export class TaskGeneration {
  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly datasets: DatasetsTreeProvider,
  ) {}

  /** The first tasks.jsonl written, or undefined (cancelled, refused or failed, and said so). */
  async generate(given?: GenerateTasksOptions | GenerateFromConfigOptions): Promise<string | undefined> {
    if (!vscode.workspace.isTrusted) {
      void vscode.window.showErrorMessage('vistool launches nothing in an untrusted workspace. Trust it first.');
      return undefined;
    }
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    if (!folder) {
      void vscode.window.showErrorMessage('vistool: open a folder first; the tasks are written into it.');
      return undefined;
    }
    const options = given ?? (await this.ask(folder));
    if (!options) return undefined;
    if ('config' in options) return this.fromConfig(folder, options);
    const outDir = isAbsolute(options.out) ? options.out : join(folder, options.out);
    const args = ['--kind', options.kind, '--n', String(options.n), '--seed', String(options.seed)];
    if (options.difficulty) args.push('--difficulty', options.difficulty);
    if (options.imageSize) args.push('--image-size', options.imageSize);
    const file = await this.dataGen(folder, args, outDir, `vistool: generating ${options.n} ${options.kind} tasks`);
    if (file) void vscode.window.showInformationMessage(`vistool: ${options.n} ${options.kind} tasks in ${relative(folder, outDir) || outDir}.`);
    return file;
  }

  /** From the palette: like one of the workspace's run configs (their own data settings come first), or by hand. */
  private async ask(folder: string): Promise<GenerateTasksOptions | GenerateFromConfigOptions | undefined> {
    // The generator's defaults look nothing like a config's tasks.
    const configs = (await vscode.workspace.findFiles(CONFIG_GLOB, '{**/node_modules/**,**/.venv*/**,**/.git/**}', 50)).sort((a, b) => a.fsPath.localeCompare(b.fsPath));
    if (configs.length > 0) {
      const items = await Promise.all(
        configs.map(async (uri) => {
          const plan = await readFile(uri.fsPath, 'utf8').then((text) => generationJobs(text, ''), () => null).catch(() => null);
          return { label: `$(settings-gear) ${basename(uri.fsPath)}`, description: plan ? plan.description : 'cannot be read: fix it first', detail: relative(folder, uri.fsPath), uri, plan };
        }),
      );
      const custom = { label: '$(edit) Choose kind, count and folder…', description: "the generator's own options", detail: undefined, uri: undefined, plan: null };
      const picked = await vscode.window.showQuickPick([...items.filter((i) => i.plan !== null), custom], { title: 'vistool: Generate Tasks: like which run config?', matchOnDetail: true });
      if (!picked) return undefined;
      if (picked.uri && picked.plan) {
        const out = await vscode.window.showInputBox({ title: 'vistool: Generate Tasks: output folder', value: `data/${picked.plan.name}`, prompt: `relative to ${folder}; train/ and eval/ go inside it, and data sets there are replaced` });
        return out ? { config: picked.uri.fsPath, out: out.trim() } : undefined;
      }
    }
    return this.askByHand(folder);
  }

  private async askByHand(folder: string): Promise<GenerateTasksOptions | undefined> {
    const kind = await vscode.window.showQuickPick(KINDS, { title: 'vistool: Generate Tasks (1/3): kind' });
    if (!kind) return undefined;
    const count = await vscode.window.showInputBox({ title: 'vistool: Generate Tasks (2/3): how many', value: '400', validateInput: (v) => (/^[1-9]\d*$/.test(v.trim()) ? null : 'a whole number of tasks') });
    if (!count) return undefined;
    const out = await vscode.window.showInputBox({ title: 'vistool: Generate Tasks (3/3): output folder', value: `data/${kind}-${count.trim()}/train`, prompt: `relative to ${folder}; a data set there is replaced` });
    if (!out) return undefined;
    return { kind, n: Number(count.trim()), seed: 1, out: out.trim() };
  }

  /** A run config's own tasks (its data.generate, both splits), so what is made by hand is what the run would make. */
  private async fromConfig(folder: string, options: GenerateFromConfigOptions): Promise<string | undefined> {
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
      const file = await this.dataGen(folder, job.args, outDir, `vistool: generating ${plan.name}'s ${job.split === 'train' ? 'training' : 'held-out'} tasks`);
      if (!file) return undefined;
      made.push(file);
    }
    const shown = made.map((f) => relative(folder, f) || f);
    void vscode.window.showInformationMessage(`vistool: ${plan.name}'s tasks (${plan.description}) in ${shown.join(' and ')}. To train on exactly these, set data.train and data.eval to them.`);
    return made[0];
  }

  /** One `vistool data gen` run with progress and cancel; the tasks.jsonl it wrote, or undefined (cancelled or failed, and said so). */
  private async dataGen(folder: string, args: string[], outDir: string, title: string): Promise<string | undefined> {
    const log = () => vistoolLog(this.context);
    const node = resolveNode(nodePathSetting());
    const command = [join(this.context.extensionPath, 'bin', 'vistool.js'), 'data', 'gen', ...args, '--out', outDir];
    log().info(`$ ${node.command} ${command.join(' ')}`);
    const result = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title, cancellable: true }, (progress, token) => {
      const abort = new AbortController();
      token.onCancellationRequested(() => abort.abort());
      const onStderrLine = (line: string) => {
        log().info(line);
        const percent = /(\d+)%/.exec(line);
        if (percent) progress.report({ message: `${percent[1]}%` });
      };
      return runCommand({ command: node.command, args: command, cwd: folder, env: { ...process.env, ...node.env } }, { signal: abort.signal, onStdoutLine: (l) => log().info(l), onStderrLine });
    });
    this.datasets.refresh();
    if (result.cancelled) return undefined;
    if (result.code !== 0) {
      void vscode.window.showErrorMessage(`vistool: task generation failed: ${result.stderr.trim().split('\n').at(-1) ?? `exit ${result.code}`}`, 'Show Log').then((c) => c && log().show(true));
      return undefined;
    }
    return join(outDir, 'tasks.jsonl');
  }
}
