/**
 * Entry point the extension host loads with --extensionTestsPath (bundled to
 * out/vscode-suite/index.js by scripts/vscode-harness/build-suite.mjs): runs the mocha suite in
 * the real extension host and rejects when a test fails, which makes the host exit non-zero.
 */
import { join } from 'node:path';
import Mocha from 'mocha';

export function run(): Promise<void> {
  // VISTOOL_EDITOR_TEST_GREP runs only the tests whose names match (code-server passes its environment on).
  const grep = process.env.VISTOOL_EDITOR_TEST_GREP;
  const mocha = new Mocha({ ui: 'tdd', timeout: 60_000, color: false, reporter: 'spec', ...(grep ? { grep } : {}) });
  mocha.addFile(join(__dirname, 'vistool.suite.js'));
  mocha.addFile(join(__dirname, 'verl-bridge.suite.js'));
  return new Promise((resolve, reject) => {
    try {
      mocha.run((failures) => (failures > 0 ? reject(new Error(`${failures} in-editor test(s) failed`)) : resolve()));
    } catch (err) {
      reject(err instanceof Error ? err : new Error(String(err)));
    }
  });
}
