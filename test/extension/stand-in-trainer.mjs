/* global setInterval, clearInterval */
// A stand-in for `python -m vistool_trainer train --config F` (the process boundary the
// extension talks to), keeping the trainer's contract: run.json with status and pid in
// output_dir, JSON events on stdout, human logs on stderr, SIGINT -> checkpoint event,
// status "interrupted", exit 0. It also starts a child (as the trainer starts the env server)
// in its process group. STAND_IN_MODE picks the behaviour:
//   train (default): emits steps until SIGINT or STAND_IN_STEPS steps, then finishes
//   crash: logs a traceback and exits 3 without a final status
//   fail: writes status failed and a failed event, exits 1 (a caught Python exception)
//   stubborn: ignores SIGINT (Stop must kill it)
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const args = process.argv.slice(2);
const configPath = args[args.indexOf('--config') + 1];
const config = JSON.parse(readFileSync(configPath, 'utf8'));
const overrideIndex = args.indexOf('--output-dir');
const runDir = resolve(overrideIndex >= 0 ? args[overrideIndex + 1] : config.output_dir);
const mode = process.env.STAND_IN_MODE ?? 'train';
const steps = Number(process.env.STAND_IN_STEPS ?? 1000);
mkdirSync(join(runDir, 'logs'), { recursive: true });

const emit = (event, fields = {}) => process.stdout.write(JSON.stringify({ event, ts: Date.now() / 1000, ...fields }) + '\n');
const log = (message) => process.stderr.write(`[vistool-trainer] ${message}\n`);
function updateRun(fields) {
  let run = {};
  try { run = JSON.parse(readFileSync(join(runDir, 'run.json'), 'utf8')); } catch { /* first write */ }
  writeFileSync(join(runDir, '.run.json.tmp'), JSON.stringify({ ...run, ...fields, updated_at: Date.now() / 1000 }));
  renameSync(join(runDir, '.run.json.tmp'), join(runDir, 'run.json'));
}

const server = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)', 'stand-in-env-server'], { stdio: 'ignore' });
writeFileSync(join(runDir, 'logs', 'server.pid'), String(server.pid));

let interrupted = false;
process.on('SIGINT', () => {
  if (mode === 'stubborn') { log('SIGINT ignored'); return; }
  interrupted = true;
});

updateRun({ status: 'running', pid: process.pid, name: config.name, started_at: Date.now() / 1000 });
emit('started', { run_dir: runDir, pid: process.pid, name: config.name, resume: args.includes('--resume') });
log('policy micro: 700,000 parameters on cpu');

if (mode === 'crash') {
  log('Traceback (most recent call last):');
  log('RuntimeError: CUDA error: out of memory');
  process.exit(3);
}
if (mode === 'fail') {
  updateRun({ status: 'failed', error: 'ValueError: no tasks in data/train/tasks.jsonl' });
  emit('failed', { error: 'ValueError: no tasks in data/train/tasks.jsonl' });
  server.kill();
  process.exit(1);
}

let step = 0;
const timer = setInterval(() => {
  if (interrupted || step >= steps) {
    clearInterval(timer);
    emit('checkpoint', { path: join(runDir, 'checkpoints', `step-${String(step).padStart(6, '0')}`), global_step: step });
    const status = interrupted ? 'interrupted' : 'finished';
    updateRun({ status, ended_at: Date.now() / 1000 });
    emit('finished', { status, global_step: step });
    server.kill();
    process.exit(0);
  }
  step += 1;
  const record = { step, stage: 'rl', 'rl/step': step, 'reward/mean': 0.1 * step, 'tool/call_rate': 0.5 };
  writeFileSync(join(runDir, 'metrics.jsonl'), JSON.stringify(record) + '\n', { flag: 'a' });
  emit('step', record);
}, 50);
