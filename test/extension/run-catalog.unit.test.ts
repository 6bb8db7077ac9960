import assert from 'node:assert/strict';
import { appendFile, mkdir, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { RunSource } from '../../env/runs/run-source.js';
import { runName } from '../../env/runs/run-name.js';
import { runTooltip } from '../../extension/runs/run-labels.js';
import { test } from 'node:test';
import { findRunDirectories, RunCatalog } from '../../extension/runs/run-catalog.js';
import { deadPid, evalRow, liveProcess, rlRow, sftRow, tempDir, writeRun } from './run-dirs.js';
import { isRunGroupItem, runsTreeRoots } from '../../extension/runs/runs-tree-roots.js';
import { isInsideRun, reportOf } from '../../env/runs/run-groups.js';

test('the runs folder lists every subfolder with run.json, config.json or metrics.jsonl, and nothing else', async () => {
  const root = await tempDir('find');
  await writeRun(root, { name: 'b-run', status: 'finished' });
  await writeRun(root, { name: 'a-run' });
  await mkdir(join(root, 'not-a-run', 'logs'), { recursive: true });
  await mkdir(join(root, '.hidden'), { recursive: true });
  assert.deepEqual(await findRunDirectories(root), [join(root, 'a-run'), join(root, 'b-run')]);
  assert.deepEqual(await findRunDirectories(join(root, 'missing')), []);
});

test('an RL run shows its newest step, reward, accuracy and tool-call rate, and eval rows are not training steps', async () => {
  const root = await tempDir('rl');
  await writeRun(root, { name: 'rl', status: 'finished', metrics: [evalRow(0, 'before'), sftRow(1, 2.5), sftRow(2, 1.5), rlRow(3, 1, 0.4, 0.5), rlRow(4, 2, 0.7, 0.25), evalRow(4, 'after_rl')] });
  const [run] = await new RunCatalog([root]).refresh();
  assert.ok(run);
  assert.equal(run.state, 'finished');
  assert.equal(run.step, 4);
  assert.equal(run.stage, 'rl');
  // Its second RL step: counted from the start of RL (rl/step), not the global step.
  assert.equal(run.stageStep, 2);
  assert.equal(run.reward, 0.7);
  assert.equal(run.toolCallRate, 0.25);
  assert.equal(run.sftLoss, 1.5);
  assert.ok(Math.abs((run.accuracy ?? 0) - 0.7 / 1.1) < 1e-12);
});

test("a veRL run shows its step, the rl stage and its reward from veRL's own metric names", async () => {
  const root = await tempDir('verl');
  const dir = join(root, 'verl-x');
  await mkdir(dir, { recursive: true });
  // veRL's file logger: validation at step 0, then one line per step (docs/VERL.md).
  const line = (step: number, data: Record<string, number>) => JSON.stringify({ step, data }) + '\n';
  await writeFile(join(dir, 'metrics.jsonl'), line(0, { 'val-core/vistool/vbar/acc/mean@1': 0.25 }) + line(1, { 'critic/score/mean': 0.3, 'training/global_step': 1 }) + line(2, { 'critic/score/mean': 0.45, 'training/global_step': 2 }));
  await writeFile(join(dir, 'run.json'), JSON.stringify({ status: 'finished', engine: 'verl' }));
  const [run] = await new RunCatalog([root]).refresh();
  assert.equal(run?.step, 2);
  assert.equal(run?.stage, 'rl');
  assert.equal(run?.reward, 0.45);
  assert.equal(run?.accuracy, null);
});

test('during SFT the stage is sft and there is no reward yet', async () => {
  const root = await tempDir('sft');
  await writeRun(root, { name: 'sft', status: 'running', pid: process.pid, metrics: [sftRow(1, 3), sftRow(2, 2.25)] });
  const [run] = await new RunCatalog([root]).refresh();
  assert.equal(run?.stage, 'sft');
  assert.equal(run?.step, 2);
  assert.equal(run?.sftLoss, 2.25);
  assert.equal(run?.reward, null);
});

test("a curriculum's perception stage is named as such, with its own loss", async () => {
  const root = await tempDir('perception');
  const perception = (step: number, loss: number) => ({ step, stage: 'perception', 'perception/step': step, 'perception/loss': loss });
  await writeRun(root, { name: 'curriculum', status: 'running', pid: process.pid, metrics: [perception(1, 4), perception(2, 3.5)] });
  const [run] = await new RunCatalog([root]).refresh();
  assert.equal(run?.stage, 'perception');
  assert.equal(run?.sftLoss, 3.5);
  assert.match(runTooltip(run!), /perception\/loss 3\.5000/);
});

test('a run.json that says running is running while its trainer lives and stopped once the pid is gone', async () => {
  const root = await tempDir('pid');
  const trainer = liveProcess('vistool_trainer');
  try {
    await new Promise((resolve) => trainer.once('spawn', resolve));
    await writeRun(root, { name: 'alive', status: 'running', pid: trainer.pid, startedAt: 1_700_000_100 });
    await writeRun(root, { name: 'dead', status: 'running', pid: await deadPid(), startedAt: 1_700_000_000 });
    // A live pid that is not a trainer (pid reuse) counts as gone.
    const other = liveProcess('something-else');
    await new Promise((resolve) => other.once('spawn', resolve));
    await writeRun(root, { name: 'reused', status: 'running', pid: other.pid, startedAt: 1_699_999_000 });
    const runs = await new RunCatalog([root]).refresh();
    other.kill();
    assert.deepEqual(runs.map((r) => [r.name, r.state]), [['alive', 'running'], ['dead', 'stopped'], ['reused', 'stopped']]);
  } finally {
    trainer.kill();
  }
});

test('a failed run keeps its error, and metrics appended later show on the next refresh', async () => {
  const root = await tempDir('grow');
  const dir = await writeRun(root, { name: 'grow', status: 'failed', error: 'RuntimeError: CUDA out of memory', metrics: [rlRow(1, 1, 0.1, 0)] });
  const catalog = new RunCatalog([root]);
  const [first] = await catalog.refresh();
  assert.equal(first?.error, 'RuntimeError: CUDA out of memory');
  assert.equal(first?.step, 1);
  await appendFile(join(dir, 'metrics.jsonl'), JSON.stringify(rlRow(2, 2, 0.9, 1)) + '\n');
  const [second] = await catalog.refresh();
  assert.equal(second?.step, 2);
  assert.equal(second?.reward, 0.9);
});

test('a run directory outside the runs folder is listed once it is added', async () => {
  const root = await tempDir('extra');
  const elsewhere = await tempDir('elsewhere');
  const dir = await writeRun(elsewhere, { name: 'outside', status: 'finished' });
  const catalog = new RunCatalog([root]);
  assert.deepEqual(await catalog.refresh(), []);
  catalog.addRunDirectory(dir);
  assert.deepEqual((await catalog.refresh()).map((r) => r.dir), [dir]);
});

test('a run has one name everywhere, its folder’s, in the Runs view, the panels and the tab titles; the config’s name is shown beside it', async () => {
  const root = await tempDir('names');
  const named = await writeRun(root, { name: 'demo', status: 'finished' });
  // The trainer writes the config's name into run.json; the folder can be called something else.
  await writeFile(join(named, 'run.json'), JSON.stringify({ status: 'finished', name: 'micro-cpu' }));
  const plain = await writeRun(root, { name: 'plain', metrics: [sftRow(1, 2)] });
  const overviews = await new RunCatalog([root]).refresh();
  assert.deepEqual(overviews.map((r) => [r.name, r.configName]).sort(), [['demo', 'micro-cpu'], ['plain', null]]);
  assert.match(runTooltip(overviews.find((r) => r.name === 'demo')!), /^config micro-cpu$/m);
  for (const dir of [named, plain]) {
    const source = new RunSource('id', dir);
    await source.refresh();
    assert.equal(source.summary().name, overviews.find((r) => r.dir === dir)?.name, 'the panels call it what the Runs view does');
    assert.equal(runName(dir), basename(dir));
  }
});

test('a folder of runs (the demo) lists its runs with the folder as their group, and they share its report.html; a run of its own keeps its own', async () => {
  const root = await tempDir('groups');
  const demo = join(root, 'demo');
  await mkdir(demo, { recursive: true });
  const tools = await writeRun(demo, { name: 'tools', status: 'finished', startedAt: 1_700_000_200, metrics: [rlRow(3, 1, 0.9, 1)] });
  const text = await writeRun(demo, { name: 'text', status: 'finished', startedAt: 1_700_000_100, metrics: [rlRow(3, 1, 0.3, 0)] });
  await writeFile(join(demo, 'report.html'), '<!doctype html><title>demo</title>');
  await writeFile(join(demo, 'summary.json'), '{}');
  // The demo's data sets are task folders, not runs: not listed.
  await mkdir(join(demo, 'data', 'train'), { recursive: true });
  await writeFile(join(demo, 'data', 'train', 'tasks.jsonl'), '{}\n');
  const alone = await writeRun(root, { name: 'alone', status: 'finished', startedAt: 1_700_000_300 });
  await writeFile(join(alone, 'report.html'), '<!doctype html>');
  const plain = await writeRun(root, { name: 'plain', status: 'finished', startedAt: 1_600_000_000 });
  // A folder of folders of runs is not searched further.
  await writeRun(join(root, 'deep', 'sweep'), { name: 'x', status: 'finished' });

  assert.deepEqual(await findRunDirectories(root), [alone, text, tools, plain].sort());
  const runs = await new RunCatalog([root]).refresh();
  assert.deepEqual(runs.map((r) => [r.name, r.group, r.report]), [
    ['alone', null, join(alone, 'report.html')],
    ['tools', demo, join(demo, 'report.html')],
    ['text', demo, join(demo, 'report.html')],
    ['plain', null, null],
  ]);
  // The view: the demo is one item holding both arms, where its newest arm stands; its report is the folder's.
  const roots = runsTreeRoots(runs);
  assert.deepEqual(roots.map((item) => (isRunGroupItem(item) ? `group ${item.name}: ${item.runs.map((r) => r.name).join(', ')} (${item.report})` : item.name)), [
    'alone',
    `group demo: tools, text (${join(demo, 'report.html')})`,
    'plain',
  ]);
});

test('a task folder is inside a run when a folder between the runs folder and it is a run directory', async () => {
  const root = await tempDir('inside');
  const run = await writeRun(root, { name: 'micro', status: 'finished' });
  await mkdir(join(root, 'demo', 'data', 'eval'), { recursive: true });
  assert.equal(await isInsideRun(join(run, 'data', 'eval', 'tasks.jsonl'), root), true);
  assert.equal(await isInsideRun(join(root, 'demo', 'data', 'eval', 'tasks.jsonl'), root), false);
  assert.equal(await isInsideRun(join(root, '..', 'elsewhere', 'tasks.jsonl'), root), false);
  // A run's own report wins over its folder's; without either there is none.
  assert.equal(await reportOf(run), null);
  await writeFile(join(root, 'report.html'), 'x');
  assert.equal(await reportOf(run), join(root, 'report.html'), 'the runs folder holds runs and is not one: its report is theirs');
  await writeFile(join(run, 'report.html'), 'y');
  assert.equal(await reportOf(run), join(run, 'report.html'));
});

test('a symbolic link to a run is followed when it leads inside the allowed roots, and only then', async () => {
  const { symlink } = await import('node:fs/promises');
  const workspace = await tempDir('links');
  const runs = join(workspace, 'runs');
  await mkdir(runs, { recursive: true });
  await writeRun(runs, { name: 'here' });
  const archive = join(workspace, 'archive');
  await mkdir(archive, { recursive: true });
  await writeRun(archive, { name: 'old' });
  await symlink(join(archive, 'old'), join(runs, 'old-link'));
  const outside = await tempDir('elsewhere');
  await writeRun(outside, { name: 'far' });
  await symlink(join(outside, 'far'), join(runs, 'far-link'));
  await symlink(join(workspace, 'no-such-folder'), join(runs, 'dangling'));
  // The runs folder alone: neither link leads inside it.
  assert.deepEqual(await findRunDirectories(runs), [join(runs, 'here')]);
  // With the workspace folder allowed (the editor passes its folders), the archive's run is found by its link's path.
  const overviews = await new RunCatalog([runs], [workspace]).refresh();
  assert.deepEqual(overviews.map((run) => run.dir).sort(), [join(runs, 'here'), join(runs, 'old-link')]);
});
