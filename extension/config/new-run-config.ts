/**
 * New Run Config: a short quick-pick flow (model, tasks, preset, device, name) that writes a
 * valid `<name>.vistool.json` in the workspace folder and opens it. Called with a
 * TemplateChoices argument it skips the questions (other commands and tests use that).
 */
import { existsSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import * as vscode from 'vscode';
import type { DatasetsTreeProvider } from '../datasets/datasets-tree.js';
import { isHeldOutSplit, PRESET_DESCRIPTIONS, type Preset, runConfigText, safeRunName, type TemplateChoices, type TasksChoice, type ModelChoice, type DeviceChoice } from './run-config-template.js';

async function pickModel(): Promise<ModelChoice | undefined> {
  const picked = await vscode.window.showQuickPick(
    [
      { label: 'micro', description: 'embedded micro Qwen2.5-VL (~0.7M parameters), learns in minutes on a CPU', choice: { kind: 'micro' } as ModelChoice },
      { label: 'Qwen/Qwen2.5-VL-3B-Instruct', description: 'the reference model; needs a GPU and the weights (hub or local copy)', choice: { kind: 'qwen3b' } as ModelChoice },
      { label: 'Custom…', description: 'a Hugging Face id or a model folder', choice: null },
    ],
    { title: 'New Run Config (1/5): model', ignoreFocusOut: true },
  );
  if (!picked) return undefined;
  if (picked.choice) return picked.choice;
  const model = await vscode.window.showInputBox({ title: 'New Run Config: model', prompt: 'Hugging Face id (org/name) or a model folder', ignoreFocusOut: true, validateInput: (v) => (v.trim() ? null : 'give a model id or folder') });
  return model ? { kind: 'custom', model: model.trim() } : undefined;
}

async function pickTasks(datasets: DatasetsTreeProvider, folder: string): Promise<TasksChoice | undefined> {
  const generated = (['table', 'vbar', 'hbar', 'grouped', 'line', 'geometry', 'search'] as const).map((kind) => ({
    label: `Generate ${kind} tasks`,
    description: '400 training + 100 held-out, made when the run starts',
    choice: { kind: 'generate', taskKind: kind } as TasksChoice,
  }));
  // Held-out splits are what a run is evaluated on: offered beside a training file, never as one. A
  // folder named train comes first (the quick pick preselects the first item).
  const trainable = (await datasets.list())
    .filter((summary) => !isHeldOutSplit(basename(summary.folder), summary.splits))
    .sort((a, b) => Number(basename(b.folder) === 'train') - Number(basename(a.folder) === 'train'));
  const found = trainable.map((summary) => {
    const dir = summary.folder;
    const sibling = ['test', 'val', 'eval'].map((name) => join(dirname(dir), name, 'tasks.jsonl')).find((path) => path !== summary.file && existsSync(path));
    const mainKind = Object.entries(summary.kinds).sort((a, b) => b[1] - a[1])[0]?.[0] ?? null;
    const rel = (path: string) => relative(folder, path) || basename(path);
    return {
      label: rel(summary.file),
      description: `${summary.tasks} tasks${sibling ? `; held-out: ${rel(sibling)}` : '; held-out generated'}`,
      choice: { kind: 'file', train: rel(summary.file), eval: sibling ? rel(sibling) : null, taskKind: mainKind } as TasksChoice,
    };
  });
  const picked = await vscode.window.showQuickPick([...found, ...generated], { title: 'New Run Config (2/5): training tasks', ignoreFocusOut: true });
  return picked?.choice;
}

async function pickPreset(model: ModelChoice): Promise<Preset | undefined> {
  const order: Preset[] = model.kind === 'micro' ? ['sft+dapo', 'dapo', 'grpo'] : ['dapo', 'sft+dapo', 'grpo'];
  const labels: Record<Preset, string> = { grpo: 'GRPO', dapo: 'DAPO', 'sft+dapo': 'SFT + DAPO' };
  const picked = await vscode.window.showQuickPick(
    order.map((preset) => ({ label: labels[preset], detail: PRESET_DESCRIPTIONS[preset], preset })),
    { title: `New Run Config (3/5): training recipe${model.kind === 'micro' ? ' (the micro model starts from scratch: SFT + DAPO)' : ''}`, ignoreFocusOut: true },
  );
  return picked?.preset;
}

async function pickDevice(model: ModelChoice): Promise<DeviceChoice | undefined> {
  const order: DeviceChoice[] = model.kind === 'micro' ? ['cpu', 'auto', 'cuda'] : ['auto', 'cuda', 'cpu'];
  const details: Record<DeviceChoice, string> = { auto: 'CUDA when the trainer finds a GPU, else CPU', cpu: 'always the CPU', cuda: 'a GPU; the run fails without one' };
  const picked = await vscode.window.showQuickPick(order.map((device) => ({ label: device, detail: details[device], device })), { title: 'New Run Config (4/5): device', ignoreFocusOut: true });
  return picked?.device;
}

async function ask(datasets: DatasetsTreeProvider, folder: string): Promise<TemplateChoices | undefined> {
  const model = await pickModel();
  if (!model) return undefined;
  const tasks = await pickTasks(datasets, folder);
  if (!tasks) return undefined;
  const preset = await pickPreset(model);
  if (!preset) return undefined;
  const device = await pickDevice(model);
  if (!device) return undefined;
  const modelName = model.kind === 'micro' ? 'micro' : model.kind === 'qwen3b' ? 'qwen2.5-vl-3b' : basename(model.model);
  const name = await vscode.window.showInputBox({
    title: 'New Run Config (5/5): run name',
    prompt: `The file is <name>.vistool.json in ${folder}; the run writes to runs/<name>`,
    value: safeRunName(`${modelName}-${preset.replace('+', '-')}`),
    ignoreFocusOut: true,
    validateInput: (v) => (safeRunName(v) === v.trim() && v.trim() !== '' ? null : `use letters, digits, '.', '-' and '_' only (e.g. ${safeRunName(v)})`),
  });
  return name ? { name: name.trim(), model, tasks, preset, device } : undefined;
}

/** Writes the config and opens it; returns its Uri (undefined when cancelled). */
export async function newRunConfig(datasets: DatasetsTreeProvider, given?: TemplateChoices, targetFolder?: string): Promise<vscode.Uri | undefined> {
  const folder = targetFolder ?? vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  if (!folder) {
    void vscode.window.showErrorMessage('vistool: open a folder first; the run config is written into it.');
    return undefined;
  }
  const choices = given ?? (await ask(datasets, folder));
  if (!choices) return undefined;
  const uri = vscode.Uri.file(join(folder, `${safeRunName(choices.name)}.vistool.json`));
  if (existsSync(uri.fsPath) && !given) {
    const answer = await vscode.window.showWarningMessage(`${basename(uri.fsPath)} exists. Replace it?`, { modal: true }, 'Replace');
    if (answer !== 'Replace') return undefined;
  }
  await vscode.workspace.fs.writeFile(uri, new TextEncoder().encode(runConfigText(choices)));
  await vscode.window.showTextDocument(uri);
  return uri;
}
