/**
 * The veRL bridge as the installed .vsix carries it, inside a real VS Code extension host.
 *
 * The interpreter with veRL 0.9.1's dependencies comes from VISTOOL_VERL_PYTHON (the harness sets
 * it to the checkout's .venv-verl in `make test-verl`, after `make verl-env` made it); without it the
 * tests that need veRL skip, saying so (`make test` on a fresh machine has no veRL environment yet).
 * Everything of vistool's that runs is the extension's own copy: the bridge and the trainer package
 * from its folder on PYTHONPATH, its bundled CLI and env server. veRL's trainer itself is not
 * started here (vLLM needs a GPU): `make verl-e2e` runs it on CPU with a stand-in rollout engine.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite, suiteSetup, test } from 'mocha';
import * as vscode from 'vscode';

const EXTENSION_ID = 'vistool.vistool';
const VERL_PYTHON = process.env.VISTOOL_VERL_PYTHON ?? '';

function workspaceDir(): string {
  const folder = vscode.workspace.workspaceFolders?.[0];
  assert.ok(folder, 'the test workspace is open');
  return folder.uri.fsPath;
}

suite('the veRL bridge from the installed .vsix', () => {
  let extensionPath = '';

  suiteSetup(async () => {
    const extension = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(extension, `${EXTENSION_ID} is installed`);
    await extension.activate();
    extensionPath = extension.extensionPath;
    if (VERL_PYTHON) await vscode.workspace.getConfiguration('vistool').update('verlPythonPath', VERL_PYTHON, vscode.ConfigurationTarget.Workspace);
  });

  test('the .vsix ships the veRL bridge: the agent loop, the reward, the converter, the CPU stand-in and its pins', () => {
    for (const shipped of ['verl_bridge/pyproject.toml', 'verl_bridge/vistool_verl/agent_loop.py', 'verl_bridge/vistool_verl/reward.py', 'verl_bridge/vistool_verl/parquet_rows.py',
      'verl_bridge/vistool_verl/cpu_stand_in/transformers_replica.py', 'bin/vistool.js', 'dist/cli.js']) {
      assert.ok(existsSync(join(extensionPath, shipped)), `the .vsix ships ${shipped}`);
    }
  });

  test('Check veRL Environment imports veRL 0.9.1 and the extension\'s own bridge, which registers the vistool_agent loop', async function () {
    // Skipped without VISTOOL_VERL_PYTHON: `make test` has no .venv-verl; `make test-verl` sets it and runs these.
    if (!VERL_PYTHON) this.skip();
    this.timeout(180_000);
    const report = await vscode.commands.executeCommand<{ verl?: string; bridge?: string; trainer?: string; agent_loop?: boolean; problems: string[] }>('vistool.checkVerlEnvironment', { quiet: true });
    assert.ok(report, 'the check printed a report');
    assert.deepEqual(report.problems, []);
    assert.equal(report.verl, '0.9.1');
    assert.equal(report.bridge, join(extensionPath, 'verl_bridge', 'vistool_verl', '__init__.py'));
    assert.equal(report.trainer, join(extensionPath, 'trainer', 'vistool_trainer', '__init__.py'));
    assert.equal(report.agent_loop, true);
  });

  test('Start Run on a veRL config writes the recipe for the extension\'s folder, makes its parquet with the packaged converter, and has the command ready', async function () {
    // Skipped without VISTOOL_VERL_PYTHON: `make test` has no .venv-verl; `make test-verl` sets it and runs these.
    if (!VERL_PYTHON) this.skip();
    this.timeout(300_000);
    const config = join(workspaceDir(), 'verl-tiny.vistool.json');
    writeFileSync(config, JSON.stringify({
      name: 'verl-tiny', engine: 'verl', device: 'cpu', output_dir: 'runs/verl-tiny',
      data: { train: 'data/sample/tasks.jsonl', eval: 'data/sample/tasks.jsonl' },
      env: { tools: true, max_turns: 2, max_tool_calls: 1, images: 'path' },
      rl: { steps: 1, prompts_per_step: 2, group_size: 2, max_new_tokens: 16 },
    }, null, 2));
    const started = await vscode.commands.executeCommand<{ runDir: string; pid: number; commandLine?: string; python?: string }>(
      'vistool.startRun', vscode.Uri.file(config), { ifExists: 'new-folder', makeVerlData: true, verlDryRun: true });
    assert.ok(started, 'Start Run prepared the veRL run');
    const recipe = join(started.runDir, 'verl-recipe');
    assert.equal(started.pid, -1);
    assert.equal(started.python, VERL_PYTHON);
    assert.ok(started.commandLine?.includes(`bash ${join(recipe, 'run.sh')}`), started.commandLine);
    // The packaged converter (run with the veRL python, the bridge from the extension) wrote the rows veRL reads.
    for (const parquet of ['train.parquet', 'val.parquet']) assert.ok(existsSync(join(recipe, parquet)), `${parquet} was made`);
    assert.equal(readFileSync(join(recipe, 'train.parquet')).subarray(0, 4).toString('latin1'), 'PAR1');
    // run.sh runs the extension's own CLI, reward and bridge: its vistool folder is the extension's.
    const runSh = readFileSync(join(recipe, 'run.sh'), 'utf8');
    assert.ok(runSh.includes(`REPO="${extensionPath}"`), 'run.sh names the extension folder as its vistool folder');
    assert.match(runSh, /^export PYTHONPATH="\$REPO\/verl_bridge:\$REPO\/trainer/m);
    // Quoted or plain: the YAML writer leaves an interpolation unquoted, and Hydra reads both alike.
    assert.match(readFileSync(join(recipe, 'verl.yaml'), 'utf8'), /path: "?\$\{oc\.env:VISTOOL_REPO\}\/verl_bridge\/vistool_verl\/reward\.py"?\n/);
  });
});
