/**
 * A run's resolved config (`config.json`, written by the trainer at start), read for the
 * dashboard's config diff when runs are compared. Never writes anything. A missing or unreadable
 * file is not an error of the run: the answer says why there is no config, for the panel to show.
 */
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { isRecord } from '../../protocol/guards.js';

/** config.json files beyond this are not read: a resolved run config is a few kB. */
const MAX_CONFIG_BYTES = 4 << 20;

export async function readRunConfig(runDir: string): Promise<{ config: Record<string, unknown> | null; problem: string | null }> {
  const path = join(runDir, 'config.json');
  let text: string;
  try {
    const { size } = await stat(path);
    if (size > MAX_CONFIG_BYTES) return { config: null, problem: `config.json is ${size} bytes, more than a run config has` };
    text = await readFile(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return { config: null, problem: code === 'ENOENT' ? 'no config.json' : `config.json unreadable: ${(err as Error).message}` };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    return { config: null, problem: `config.json is not JSON: ${(err as Error).message}` };
  }
  return isRecord(parsed) ? { config: parsed, problem: null } : { config: null, problem: 'config.json is not a JSON object' };
}
