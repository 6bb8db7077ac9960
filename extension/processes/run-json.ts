/**
 * The extension's only writes to a run directory: run.json's `starting` while a trainer boots,
 * and closing a run.json that a trainer could not close itself (it crashed, was killed, or never
 * got far enough to write one), so the Runs view says failed or stopped instead of running
 * forever. Written as the trainer writes it
 * (run_directory.py write_json_atomic): a temp file in the same folder, then a rename.
 *
 * Editor-free (unit-tested under plain Node).
 */
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { readJsonObject } from '../runs/read-json.js';

async function readRun(dir: string): Promise<Record<string, unknown>> {
  return (await readJsonObject(join(dir, 'run.json'))) ?? {};
}

async function writeRun(dir: string, run: Record<string, unknown>): Promise<void> {
  await mkdir(dir, { recursive: true });
  const temporary = join(dir, `.run.json.vistool-${process.pid}-${Date.now()}`);
  await writeFile(temporary, JSON.stringify(run, null, 2) + '\n');
  await rename(temporary, join(dir, 'run.json'));
}

/**
 * Marks a run `starting` with the trainer's pid the moment it is spawned, so the Runs view
 * lists it before Python has imported torch; the trainer then writes `running` over it (it
 * merges run.json, keeping the other fields). A veRL run.sh writes no run.json, so its launch is
 * marked `running` at once, with `fields` (engine, the command), and closed by the extension.
 */
export async function markRunStarting(dir: string, pid: number, name: string, status: 'starting' | 'running' = 'starting', fields: Record<string, unknown> = {}): Promise<void> {
  const run = await readRun(dir);
  const now = Date.now() / 1000;
  const updated: Record<string, unknown> = { ...run, ...fields, status, pid, name: typeof run.name === 'string' ? run.name : name, updated_at: now };
  if (typeof updated.started_at !== 'number') updated.started_at = now;
  delete updated.ended_at;
  delete updated.error;
  await writeRun(dir, updated);
}

/** Statuses a trainer writes when it ends on its own; the extension never overwrites them. */
const FINAL = new Set(['finished', 'failed', 'interrupted', 'paused', 'stopped']);

/**
 * Marks the run `status` (failed or stopped; finished for a veRL run.sh that exited 0) unless the
 * trainer already wrote a final status.
 * Returns the status now in run.json.
 */
export async function closeRunJson(dir: string, status: 'failed' | 'stopped' | 'finished', error: string | null, name?: string): Promise<string> {
  const run = await readRun(dir);
  if (typeof run.status === 'string' && FINAL.has(run.status)) return run.status;
  const now = Date.now() / 1000;
  const updated: Record<string, unknown> = { ...run, status, ended_at: now, updated_at: now };
  if (name !== undefined && updated.name === undefined) updated.name = name;
  if (error !== null) updated.error = error;
  await writeRun(dir, updated);
  return status;
}
