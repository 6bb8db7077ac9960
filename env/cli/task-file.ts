/**
 * Which tasks.jsonl a command reads: every command that reads tasks takes the file itself or the
 * folder `vistool data gen --out` / `vistool data convert --out` wrote, which holds one.
 */
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { UsageError } from './command.js';

export function taskFileOf(path: string, argument = 'PATH'): string {
  let isFolder: boolean;
  try {
    isFolder = statSync(path).isDirectory();
  } catch {
    throw new UsageError(`${argument} ${path} does not exist; give a tasks.jsonl or the folder \`vistool data gen --out\` wrote`);
  }
  if (!isFolder) return path;
  const inside = join(path, 'tasks.jsonl');
  if (!existsSync(inside)) throw new UsageError(`${argument} ${path} is a folder without a tasks.jsonl; give the task file itself, or make one with \`vistool data gen --kind table --n 50 --seed 1 --out DIR\``);
  return inside;
}
