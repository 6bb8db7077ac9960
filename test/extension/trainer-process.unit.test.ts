import assert from 'node:assert/strict';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { isProcessAlive } from '../../env/core/process-liveness.js';
import type { TrainerEvent } from '../../extension/processes/trainer-events.js';
import { planTrainerLaunch, type TrainerLaunchPlan } from '../../extension/processes/trainer-launch.js';
import { TrainerProcess } from '../../extension/processes/trainer-process.js';
import { tempDir } from './run-dirs.js';
import { runJson, until } from './process-waits.js';

const standIn = join(__dirname, 'stand-in-trainer.mjs');

/** The real launch plan, with the stand-in script in place of the Python interpreter. */
async function plan(mode: string, extraEnv: Record<string, string> = {}): Promise<{ plan: TrainerLaunchPlan; runDir: string }> {
  const cwd = await tempDir('trainer');
  const configPath = join(cwd, 'micro.vistool.json');
  await writeFile(configPath, JSON.stringify({ name: 'micro', output_dir: 'runs/micro' }));
  const runDir = join(cwd, 'runs', 'micro');
  const real = planTrainerLaunch({ python: 'python3', pythonEnv: {}, trainerRoot: '/ext/trainer', node: null, configPath, cwd, runDir, resume: false, baseEnv: { ...process.env, STAND_IN_MODE: mode, ...extraEnv } });
  return { plan: { ...real, command: process.execPath, args: [standIn, ...real.args] }, runDir };
}


test('the launch plan runs the bundled trainer module in the config folder with unbuffered output to the run logs', () => {
  const launched = planTrainerLaunch({
    python: '/venv/bin/python', pythonEnv: { VIRTUAL_ENV: '/venv' }, trainerRoot: '/ext/trainer', node: '/opt/node/bin/node', configPath: '/ws/a.vistool.json', cwd: '/ws', runDir: '/ws/runs/a',
    resume: true, outputDirOverride: '/ws/runs/a-2', maxSteps: 5, baseEnv: { PATH: '/usr/bin', PYTHONPATH: '/x', ELECTRON_RUN_AS_NODE: '1' },
  });
  assert.equal(launched.command, '/venv/bin/python');
  assert.deepEqual(launched.args, ['-m', 'vistool_trainer', 'train', '--config', '/ws/a.vistool.json', '--resume', '--output-dir', '/ws/runs/a-2', '--max-steps', '5']);
  assert.equal(launched.cwd, '/ws');
  assert.equal(launched.env.PYTHONPATH, '/ext/trainer:/x');
  assert.equal(launched.env.PATH, '/opt/node/bin:/usr/bin');
  assert.equal(launched.env.PYTHONUNBUFFERED, '1');
  assert.equal(launched.env.VIRTUAL_ENV, '/venv');
  assert.equal(launched.env.ELECTRON_RUN_AS_NODE, undefined);
  assert.equal(launched.eventsFile, '/ws/runs/a/logs/trainer-events.jsonl');
  assert.equal(launched.stderrFile, '/ws/runs/a/logs/trainer-stderr.log');
});

test('a started trainer streams its events and stderr, and Stop (SIGINT) lets it checkpoint and end interrupted', async () => {
  const { plan: launch, runDir } = await plan('train');
  const events: TrainerEvent[] = [];
  const stderr: string[] = [];
  const trainer = await TrainerProcess.start(launch, { onEvent: (e) => events.push(e), onStderr: (l) => stderr.push(...l) }, 'micro');
  assert.ok(isProcessAlive(trainer.pid, 'vistool_trainer'));
  await until(() => events.filter((e) => e.event === 'step').length >= 3, 'three step events');
  assert.equal(events[0]?.event, 'started');
  assert.equal(events[0]?.pid, trainer.pid);
  assert.equal((await runJson(runDir)).status, 'running');
  const exit = await trainer.stop(10_000);
  assert.equal(exit.code, 0);
  assert.equal(exit.stopOutcome, 'interrupted');
  assert.equal(exit.status, 'interrupted');
  assert.equal((await runJson(runDir)).status, 'interrupted');
  assert.deepEqual(events.slice(-2).map((e) => e.event), ['checkpoint', 'finished']);
  assert.ok(stderr.some((line) => line.includes('policy micro')), 'stderr lines reach the handler');
  assert.equal(isProcessAlive(trainer.pid), false);
});

test('a trainer that ignores SIGINT is killed with its process group after the timeout, and the run is marked stopped', async () => {
  const { plan: launch, runDir } = await plan('stubborn');
  const trainer = await TrainerProcess.start(launch, {}, 'micro');
  await until(async () => (await runJson(runDir).catch(() => ({}) as Record<string, unknown>)).status === 'running', 'run.json running');
  const serverPid = Number(await readFile(join(runDir, 'logs', 'server.pid'), 'utf8'));
  assert.ok(isProcessAlive(serverPid, 'stand-in-env-server'));
  const exit = await trainer.stop(300);
  assert.equal(exit.stopOutcome, 'killed');
  assert.equal(exit.signal, 'SIGKILL');
  assert.equal(exit.status, 'stopped');
  assert.match(String((await runJson(runDir)).error), /killed after Stop/);
  await until(() => !isProcessAlive(serverPid, 'stand-in-env-server'), 'the env server child to die with the group');
});

test('a crash marks the run failed with the exit code and the last stderr line, and its orphaned env server is stopped', async () => {
  const { plan: launch, runDir } = await plan('crash');
  const trainer = await TrainerProcess.start(launch, {}, 'micro');
  const exit = await trainer.whenExited();
  const serverPid = Number(await readFile(join(runDir, 'logs', 'server.pid'), 'utf8'));
  await until(() => !isProcessAlive(serverPid, 'stand-in-env-server'), 'the orphaned env server to be stopped');
  assert.equal(exit.code, 3);
  assert.equal(exit.status, 'failed');
  assert.equal(exit.error, 'the trainer exited with code 3: [vistool-trainer] RuntimeError: CUDA error: out of memory');
  assert.deepEqual(exit.lastStderr.slice(-2), ['[vistool-trainer] Traceback (most recent call last):', '[vistool-trainer] RuntimeError: CUDA error: out of memory']);
  const run = await runJson(runDir);
  assert.equal(run.status, 'failed');
  assert.equal(run.error, exit.error);
});

test("a failure the trainer reported itself keeps the trainer's status and error", async () => {
  const { plan: launch, runDir } = await plan('fail');
  const exit = await (await TrainerProcess.start(launch, {}, 'micro')).whenExited();
  assert.equal(exit.code, 1);
  assert.equal(exit.status, 'failed');
  assert.equal(exit.error, 'ValueError: no tasks in data/train/tasks.jsonl');
  assert.equal((await runJson(runDir)).error, 'ValueError: no tasks in data/train/tasks.jsonl');
});

test('a trainer that cannot be started is an error that names the command', async () => {
  const { plan: launch } = await plan('train');
  await assert.rejects(TrainerProcess.start({ ...launch, command: '/nonexistent/python' }, {}), /could not start the trainer \(\/nonexistent\/python .*-m vistool_trainer train .*ENOENT/);
});

test('after a reload, attaching by pid follows new events only and notices the exit', async () => {
  const { plan: launch, runDir } = await plan('train');
  const first = await TrainerProcess.start(launch, {}, 'micro');
  await until(async () => (await readFile(join(runDir, 'metrics.jsonl'), 'utf8').catch(() => '')).split('\n').length > 3, 'some steps');
  first.dispose(); // the window reloads: the old host stops following, the trainer keeps going
  const events: TrainerEvent[] = [];
  const attached = await TrainerProcess.attach(runDir, first.pid, { onEvent: (e) => events.push(e) }, 'micro');
  await until(() => events.length >= 2, 'new events');
  assert.ok(events.every((e) => e.event !== 'started'), 'events from before the attach are not replayed');
  const exit = await attached.stop(10_000);
  assert.equal(exit.code, null, 'an attached trainer is not our child: no exit code');
  assert.equal(exit.status, 'interrupted');
});

test("a trainer's first events are delivered even when it writes them before start() returns", async () => {
  // A shell child writes its `started` event within a millisecond or two of the spawn, while start()
  // is still recording the run as starting; an earlier run's event sits in the file and must be skipped.
  for (let attempt = 0; attempt < 5; attempt += 1) {
    const { plan: launch, runDir } = await plan('train');
    await mkdir(join(runDir, 'logs'), { recursive: true });
    await writeFile(launch.eventsFile, `${JSON.stringify({ event: 'finished', ts: 1 })}\n`);
    const line = JSON.stringify({ event: 'started', ts: 2, pid: 0 });
    const events: TrainerEvent[] = [];
    const trainer = await TrainerProcess.start({ ...launch, command: '/bin/sh', args: ['-c', `printf '%s\\n' '${line}'; sleep 1`] },
      { onEvent: (e) => events.push(e) }, 'micro');
    await trainer.whenExited();
    assert.deepEqual(events.map((e) => e.event), ['started'], `attempt ${attempt}: the earlier run's event skipped, the child's delivered`);
  }
});
