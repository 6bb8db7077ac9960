// The same in-editor suite through @vscode/test-electron, for contributors who have VS Code:
// the extension loads from this checkout (extensionDevelopmentPath), not from a .vsix.
//   VSCODE_EXECUTABLE=/path/to/code node scripts/vscode-harness/run-electron-tests.mjs
// Without VSCODE_EXECUTABLE, test-electron downloads VS Code (needs the network). On a Linux
// machine without a display, run it under `xvfb-run -a`. Build first: `npm run build`.
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { runTests } from '@vscode/test-electron';
import { prepareWorkspace } from './workspace.mjs';

const root = resolve(import.meta.dirname, '..', '..');
const suiteEntry = execFileSync(process.execPath, [join(import.meta.dirname, 'build-suite.mjs')], { encoding: 'utf8' }).trim().split('\n').at(-1);
const ws = mkdtempSync(join(tmpdir(), 'vistool-electron-ws-'));
prepareWorkspace(root, ws);
try {
  await runTests({
    ...(process.env.VSCODE_EXECUTABLE ? { vscodeExecutablePath: process.env.VSCODE_EXECUTABLE } : {}),
    extensionDevelopmentPath: root,
    extensionTestsPath: suiteEntry,
    launchArgs: [ws, '--disable-workspace-trust', '--disable-extensions'],
    extensionTestsEnv: { VISTOOL_EDITOR_TEST_MODE: 'development' },
  });
} catch (err) {
  console.error(`editor tests (test-electron): ${err.message}`);
  process.exit(1);
}
