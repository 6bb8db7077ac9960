// The workspace the in-editor suite opens: a copy of test/extension/in-editor/workspace (a tiny
// micro config, a config with errors), a task folder made by the repository's own generator,
// and workspace settings that point the trainer at the repository's venv.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export function prepareWorkspace(root, ws) {
  const python = join(root, '.venv', 'bin', 'python');
  if (!existsSync(python)) throw new Error(`the trainer venv ${python} is missing; run \`make venv\``);
  cpSync(join(root, 'test', 'extension', 'in-editor', 'workspace'), ws, { recursive: true });
  mkdirSync(join(ws, '.vscode'), { recursive: true });
  writeFileSync(join(ws, '.vscode', 'settings.json'), JSON.stringify({ 'vistool.pythonPath': python, 'vistool.stopTimeoutSeconds': 60 }, null, 2));
  execFileSync(process.execPath, [join(root, 'bin', 'vistool.js'), 'data', 'gen', '--kind', 'table', '--n', '2', '--seed', '1', '--out', join(ws, 'data', 'sample')], { stdio: ['ignore', 'ignore', 'inherit'] });
}
