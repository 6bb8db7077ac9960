/**
 * A run's name, the same everywhere it is shown (the Runs view, the status bar, the panels' run
 * toggles, their tab titles): its folder's name. Not run.json's `name`, which is the run config's
 * name: two runs of one config (seeds, a resumed copy, the demo's arms before they were named)
 * would share it and could not be told apart when overlaid. The config's name is shown beside it
 * where it differs (`configNameOf`).
 */
import { basename } from 'node:path';

export function runName(dir: string): string {
  return basename(dir);
}

/** run.json's `name` when it says something the folder's name does not. */
export function configNameOf(dir: string, run: Readonly<Record<string, unknown>> | null | undefined): string | null {
  const name = run?.name;
  return typeof name === 'string' && name.trim() !== '' && name !== runName(dir) ? name : null;
}
