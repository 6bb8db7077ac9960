// Bundles the in-editor mocha suite (test/extension/in-editor/*.ts) for the extension host:
// out/vscode-suite/index.js (the --extensionTestsPath entry) and vistool.suite.js. `vscode` comes
// from the host and mocha from node_modules, so both stay external. Prints the entry's path.
import * as esbuild from 'esbuild';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..', '..');
const outdir = join(root, 'out', 'vscode-suite');
await esbuild.build({
  entryPoints: {
    index: join(root, 'test/extension/in-editor/index.ts'),
    'vistool.suite': join(root, 'test/extension/in-editor/vistool.suite.ts'),
    'verl-bridge.suite': join(root, 'test/extension/in-editor/verl-bridge.suite.ts'),
  },
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  external: ['vscode', 'mocha'],
  outdir,
  sourcemap: 'inline',
  logLevel: 'warning',
});
console.log(join(outdir, 'index.js'));
