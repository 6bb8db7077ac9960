/**
 * The state a run shows in the Runs view, derived from run.json and whether its process lives.
 * run.json says what the trainer last wrote; a trainer killed with SIGKILL (or a machine that
 * rebooted) leaves `running` behind, which this turns into `stopped` when the pid is gone.
 *
 * Editor-free (unit-tested under plain Node).
 */

export type RunState = 'running' | 'starting' | 'finished' | 'failed' | 'stopped' | 'interrupted' | 'paused' | 'unknown';

export const TRAINER_COMMAND_MARK = 'vistool_trainer';

export function runStateFrom(status: string | null, pidAlive: boolean | null): RunState {
  switch (status) {
    case 'running':
      return pidAlive === false ? 'stopped' : 'running';
    case 'starting':
      // Written by the extension at spawn; a trainer that died before writing `running` failed to start.
      return pidAlive === false ? 'failed' : 'starting';
    case 'finished':
    case 'failed':
    case 'stopped':
    case 'interrupted':
    case 'paused':
      return status;
    case null:
      return pidAlive ? 'starting' : 'unknown';
    default:
      return 'unknown';
  }
}

/** A run that can be continued from its newest checkpoint. */
export function isResumable(state: RunState): boolean {
  return state === 'stopped' || state === 'interrupted' || state === 'paused' || state === 'failed';
}
