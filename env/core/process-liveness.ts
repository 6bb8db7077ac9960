/**
 * Is a process still alive, and is it the one we think it is? A pid from run.json can outlive
 * its process and be reused by another, so on Linux the command line is checked against what
 * the run started (python ... vistool_trainer, or our run supervisor).
 *
 * Shared by the env (eval records, the run viewer) and the extension. Never signals anything but
 * signal 0.
 */
import { readFileSync } from 'node:fs';

export function isProcessAlive(pid: number, expectedCommandPart?: string): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (err) {
    // EPERM: it exists but belongs to someone else; ESRCH: it is gone.
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  if (expectedCommandPart === undefined) return true;
  let commandLine: string;
  try {
    commandLine = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    // No /proc (macOS) or it vanished in between: trust signal 0.
    return process.platform !== 'linux';
  }
  if (commandLine === '') return false; // a zombie: exited, not yet reaped
  return commandLine.replace(/\0/g, ' ').includes(expectedCommandPart);
}
