/**
 * The extension inside a real VS Code extension host (code-server, headless; see
 * scripts/vscode-harness/). The extension under test is the installed .vsix; the workspace is a
 * copy of test/extension/in-editor/workspace plus a generated task folder, with
 * vistool.pythonPath pointing at the repository's trainer venv. Start Run runs the real trainer
 * on the micro model.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite, suiteSetup, test } from 'mocha';
import * as vscode from 'vscode';
import type { VistoolApi } from '../../../extension/extension.js';

const EXTENSION_ID = 'vistool.vistool';

function workspaceDir(): string {
  const folder = vscode.workspace.workspaceFolders?.[0];
  assert.ok(folder, 'the test workspace is open');
  return folder.uri.fsPath;
}

async function until<T>(what: string, timeoutMs: number, probe: () => T | undefined | false | Promise<T | undefined | false>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

function vistoolDiagnostics(uri: vscode.Uri): vscode.Diagnostic[] {
  return vscode.languages.getDiagnostics(uri).filter((d) => d.source === 'vistool');
}

suite('vistool in a real VS Code', () => {
  let api: VistoolApi;

  suiteSetup(async () => {
    const extension = vscode.extensions.getExtension<VistoolApi>(EXTENSION_ID);
    assert.ok(extension, `${EXTENSION_ID} is installed`);
    api = await extension.activate();
  });

  test('the extension is active in the workspace (Node) extension host, loaded from the installed .vsix', () => {
    const extension = vscode.extensions.getExtension<VistoolApi>(EXTENSION_ID);
    assert.ok(extension?.isActive);
    assert.equal(extension.extensionKind, vscode.ExtensionKind.Workspace);
    assert.ok(!extension.extensionPath.startsWith(workspaceDir()), 'not loaded from the workspace');
    // A .vsix install lands in the extensions folder as publisher.name-version; test-electron loads the checkout instead.
    if (process.env.VISTOOL_EDITOR_TEST_MODE === 'vsix') assert.match(extension.extensionPath, /vistool\.vistool-0\.1\.0/);
    for (const shipped of ['dist/extension.js', 'dist/cli.js', 'dist/parse-worker.js', 'dist/task-worker.js', 'dist/webview/dashboard.js', 'trainer/vistool_trainer/run/train.py', 'trainer/vistool_trainer/config.py', 'trainer/vistool_trainer/model/tool_chat_template.jinja', 'schemas/run-config.schema.json']) {
      assert.ok(existsSync(join(extension.extensionPath, shipped)), `the .vsix ships ${shipped}`);
    }
  });

  test('every contributed command is registered', async () => {
    const registered = new Set(await vscode.commands.getCommands(true));
    const contributed = (vscode.extensions.getExtension(EXTENSION_ID)?.packageJSON as { contributes: { commands: { command: string }[] } }).contributes.commands.map((c) => c.command);
    assert.ok(contributed.length >= 15);
    assert.deepEqual(contributed.filter((id) => !registered.has(id)), []);
  });

  test('the Configs and Datasets views list the workspace files', async () => {
    await vscode.commands.executeCommand('workbench.view.extension.vistool');
    const configs = await until('configs', 20_000, async () => {
      const found = await vscode.workspace.findFiles('**/*.vistool.json');
      return found.length >= 2 ? found : undefined;
    });
    assert.deepEqual(configs.map((u) => u.path.split('/').at(-1)).sort(), ['bad.vistool.json', 'micro-tiny.vistool.json']);
  });

  test('a config with errors gets the semantic diagnostics where the values are, and a quick fix clears one', async () => {
    const uri = vscode.Uri.file(join(workspaceDir(), 'bad.vistool.json'));
    const document = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(document);
    const diagnostics = await until('vistool diagnostics', 20_000, () => {
      const found = vistoolDiagnostics(uri);
      return found.length >= 2 ? found : undefined;
    });
    const byCode = new Map(diagnostics.map((d) => [String(d.code), d]));
    const group = byCode.get('rl/group-too-small');
    const clip = byCode.get('rl/clip-high-below-low');
    assert.ok(group && clip, `codes: ${[...byCode.keys()].join(', ')}`);
    assert.equal(group.severity, vscode.DiagnosticSeverity.Error);
    assert.equal(document.getText(group.range), '1');
    assert.equal(group.range.start.line, 3);
    assert.equal(document.getText(clip.range), '0.2');
    assert.equal(clip.range.start.line, 5);
    // VS Code's JSON support validates the schema through contributes.jsonValidation.
    const schema = await until('a schema diagnostic for the misspelt key', 30_000, () =>
      vscode.languages.getDiagnostics(uri).find((d) => d.source !== 'vistool' && document.getText(d.range).includes('advantag')),
    ).catch((err: Error) => {
      const seen = vscode.languages.getDiagnostics(uri).map((d) => `${d.source ?? '?'} ${d.range.start.line}:${d.range.start.character} ${d.message}`);
      throw new Error(`${err.message}; diagnostics: ${seen.join(' | ')}`);
    });
    assert.equal(schema.severity, vscode.DiagnosticSeverity.Warning);
    const actions = await vscode.commands.executeCommand<vscode.CodeAction[]>('vscode.executeCodeActionProvider', uri, group.range, vscode.CodeActionKind.QuickFix.value);
    const fix = actions.find((a) => a.title === 'Set rl.group_size to 8');
    assert.ok(fix?.edit, `quick fixes offered: ${actions.map((a) => a.title).join(' | ')}`);
    const rename = (await vscode.commands.executeCommand<vscode.CodeAction[]>('vscode.executeCodeActionProvider', uri, schema.range, vscode.CodeActionKind.QuickFix.value)).find((a) => a.title === "Rename 'advantag' to 'advantage'");
    assert.ok(rename, 'the misspelt key gets a rename quick fix beside the schema diagnostic');
    assert.ok(await vscode.workspace.applyEdit(fix.edit));
    await until('the group-size diagnostic to go', 10_000, () => !vistoolDiagnostics(uri).some((d) => d.code === 'rl/group-too-small'));
    assert.equal(document.getText(document.lineAt(3).range).trim(), '"group_size": 8,');
    await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
  });

  test('New Run Config writes a config that has no errors', async () => {
    const uri = await vscode.commands.executeCommand<vscode.Uri>('vistool.newRunConfig', { name: 'made-here', model: { kind: 'micro' }, tasks: { kind: 'generate', taskKind: 'vbar' }, preset: 'sft+dapo', device: 'cpu' });
    assert.ok(uri && existsSync(uri.fsPath));
    const config = JSON.parse(readFileSync(uri.fsPath, 'utf8')) as { output_dir: string; rl: { clip_ratio_high: number } };
    assert.equal(config.output_dir, 'runs/made-here');
    assert.equal(config.rl.clip_ratio_high, 0.28);
    const document = await vscode.workspace.openTextDocument(uri);
    assert.deepEqual(api.diagnostics.problemsFor(document).filter((p) => p.severity === 'error'), []);
    await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
  });

  test('Start Run on the micro config runs the real trainer, the Runs view and status bar show it, the dashboard loads, and Stop interrupts it with a checkpoint', async function () {
    this.timeout(300_000);
    const config = vscode.Uri.file(join(workspaceDir(), 'micro-tiny.vistool.json'));
    const started = await vscode.commands.executeCommand<{ runDir: string; pid: number }>('vistool.startRun', config, { ifExists: 'new-folder' });
    assert.ok(started, 'Start Run launched a trainer');
    assert.equal(started.runDir, join(workspaceDir(), 'runs', 'micro-tiny'));
    const running = await until('a training step in the Runs view', 240_000, async () => {
      const run = (await api.runs.refresh()).find((r) => r.dir === started.runDir);
      if (run?.state === 'failed') throw new Error(`the run failed: ${run.error ?? ''}\n${readFileSync(join(started.runDir, 'logs', 'trainer-stderr.log'), 'utf8').slice(-2000)}`);
      return run?.state === 'running' && run.step !== null && run.step >= 1 ? run : undefined;
    });
    assert.equal(running.pid, started.pid);
    assert.equal(running.stage, 'sft');
    assert.equal(api.statusBar.activeRun()?.dir, started.runDir);

    const panel = await vscode.commands.executeCommand<vscode.WebviewPanel>('vistool.openDashboard', started.runDir);
    assert.ok(panel);
    assert.match(panel.webview.html, /<meta http-equiv="Content-Security-Policy" content="default-src &#39;none&#39;; script-src &#39;nonce-/);
    // The page asked for the runs and said it is ready: its script loaded under the CSP and the protocol round trip works.
    await until('the dashboard to load and report ready', 60_000, () => api.panels.isReady('dashboard'));

    const exit = await vscode.commands.executeCommand<{ status: string; stopOutcome: string }>('vistool.stopRun', started.runDir);
    assert.equal(exit.stopOutcome, 'interrupted');
    assert.equal(exit.status, 'interrupted');
    const stopped = await until('the Runs view to show it interrupted', 20_000, async () => (await api.runs.refresh()).find((r) => r.dir === started.runDir && r.state === 'interrupted'));
    assert.ok(stopped.step !== null && stopped.step >= 1);
    const checkpoints = readdirSync(join(started.runDir, 'checkpoints')).filter((name) => existsSync(join(started.runDir, 'checkpoints', name, 'trainer_state.json')));
    assert.equal(checkpoints.length, 1, 'SIGINT saved a complete checkpoint');
    assert.equal(api.statusBar.activeRun(), undefined, 'the status bar hides once nothing runs');
  });

  test('a person sees the interrupted run in the Runs view (checked from the page by the harness)', async function () {
    // Only the harness (scripts/vscode-harness/run-editor-tests.mjs, which sets the mode to 'vsix')
    // watches the page and answers .ui-request.json; in a plain extension-host run nothing would.
    if (process.env.VISTOOL_EDITOR_TEST_MODE !== 'vsix') this.skip();
    const request = join(workspaceDir(), '.ui-request.json');
    const answer = join(workspaceDir(), '.ui-result.json');
    writeFileSync(request, JSON.stringify({ runsViewRow: 'micro-tiny' }));
    const result = await until('the harness to look at the Runs view', 50_000, () => (existsSync(answer) ? (JSON.parse(readFileSync(answer, 'utf8')) as { ok: boolean; text: string }) : undefined));
    assert.ok(result.ok, result.text);
    assert.match(result.text, /^micro-tiny\s*interrupted · sft step \d+ · loss \d+\.\d{3}$/);
  });

  test('Evaluate Checkpoint runs the trainer\'s evaluation on the checkpoint Stop saved', async function () {
    this.timeout(180_000);
    const runDir = join(workspaceDir(), 'runs', 'micro-tiny');
    const checkpoint = readdirSync(join(runDir, 'checkpoints')).map((name) => join(runDir, 'checkpoints', name))[0];
    assert.ok(checkpoint);
    const results = await vscode.commands.executeCommand<Record<string, unknown>>('vistool.evaluateCheckpoint', runDir, checkpoint);
    assert.ok(results, 'the evaluation printed its eval event');
    assert.equal(results.checkpoint, checkpoint);
    const metrics = Object.keys(results).filter((key) => key.startsWith('eval/'));
    assert.ok(metrics.length > 0, `eval metrics: ${Object.keys(results).join(', ')}`);
  });

  test('Generate Tasks writes a task folder with the bundled CLI and the Datasets view finds it', async function () {
    this.timeout(120_000);
    const file = await vscode.commands.executeCommand<string>('vistool.generateTasks', { kind: 'vbar', n: 3, seed: 7, out: 'data/generated' });
    assert.equal(file, join(workspaceDir(), 'data', 'generated', 'tasks.jsonl'));
    const lines = readFileSync(file, 'utf8').trim().split('\n');
    assert.ok(lines.length >= 1 && lines.length <= 3);
    assert.equal((JSON.parse(lines[0] ?? '{}') as { kind: string }).kind, 'vbar');
    const found = await until('the Datasets view to list it', 20_000, async () => (await vscode.workspace.findFiles('data/generated/tasks.jsonl')).length === 1);
    assert.ok(found);
  });

  test('Generate Tasks like a run config makes its training and held-out tasks with its own data settings', async function () {
    this.timeout(120_000);
    const config = join(workspaceDir(), 'micro-tiny.vistool.json');
    const file = await vscode.commands.executeCommand<string>('vistool.generateTasks', { config, out: 'data/like-micro-tiny' });
    assert.equal(file, join(workspaceDir(), 'data', 'like-micro-tiny', 'train', 'tasks.jsonl'));
    // The config asks for 8 training and 4 held-out tables at 224x112 (micro-tiny.vistool.json).
    for (const [split, count] of [['train', 8], ['eval', 4]] as const) {
      const lines = readFileSync(join(workspaceDir(), 'data', 'like-micro-tiny', split, 'tasks.jsonl'), 'utf8').trim().split('\n');
      assert.equal(lines.length, count, split);
      const first = JSON.parse(lines[0] ?? '{}') as { kind: string; image: string };
      assert.equal(first.kind, 'table');
      const png = readFileSync(join(workspaceDir(), 'data', 'like-micro-tiny', split, first.image));
      assert.deepEqual([png.readUInt32BE(16), png.readUInt32BE(20)], [224, 112]);
    }
  });

  test('Open Tool Playground on a PNG opens the playground with that image', async () => {
    const tasks = join(workspaceDir(), 'data', 'sample', 'tasks.jsonl');
    const first = JSON.parse(readFileSync(tasks, 'utf8').split('\n')[0] ?? '{}') as { image: string };
    const image = vscode.Uri.file(join(workspaceDir(), 'data', 'sample', first.image));
    const panel = await vscode.commands.executeCommand<vscode.WebviewPanel>('vistool.openPlayground', image);
    assert.ok(panel);
    assert.equal(panel.title, 'vistool · Tool playground');
    await until('the playground to load and report ready', 60_000, () => api.panels.isReady('playground'));
  });
});
