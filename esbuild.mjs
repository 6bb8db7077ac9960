// Bundles every runnable piece: the CLI (which also hosts the env server) with its parser worker,
// the extension host and each webview. Native modules (sharp, onnxruntime-node) stay external.
import * as esbuild from 'esbuild';
import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { webviewTargets } from './webview/bundles.mjs';

const watch = process.argv.includes('--watch');
const production = process.argv.includes('--production');

const nodeExternals = ['sharp', 'onnxruntime-node', 'vscode'];
// Node targets prefer a package's ES module build: jsonc-parser's UMD main build loads its parts
// through a dynamic require that esbuild cannot follow (the bundle then fails at run time).
const nodeMainFields = ['module', 'main'];

/** @type {esbuild.BuildOptions[]} */
const targets = [
  // The env server's parser worker and the task generator's workers run from their own files beside
  // the CLI bundle (env/server/parser-pool.ts, env/tasks/task-pool.ts).
  { entryPoints: { cli: 'env/cli/main.ts', 'parse-worker': 'env/server/parse-worker.ts', 'task-worker': 'env/tasks/task-worker.ts' }, platform: 'node', format: 'cjs', target: 'node20', external: nodeExternals, mainFields: nodeMainFields },
  { entryPoints: { extension: 'extension/extension.ts' }, platform: 'node', format: 'cjs', target: 'node20', external: nodeExternals, mainFields: nodeMainFields },
  // The panels: browser bundles and styles into dist/webview/ (see webview/bundles.mjs).
  ...webviewTargets,
];

const common = { bundle: true, outdir: 'dist', sourcemap: !production, minify: production, logLevel: 'info' };
// A target whose entry file is missing is skipped rather than failing the whole build.
const ready = targets.filter((t) => Object.values(t.entryPoints).every((p) => existsSync(p)));

if (watch) {
  for (const t of ready) await (await esbuild.context({ ...common, ...t })).watch();
} else {
  await Promise.all(ready.map((t) => esbuild.build({ ...common, ...t })));
  writeEditorSchema();
}

// The extension's jsonValidation reads a self-contained copy of the run-config schema (editors
// resolve the rewards $ref against the schema's https $id and will not fetch it): the CLI's
// `config schema --for-editor` output, so there is one implementation of the inlining. That copy
// has no validating keywords (env/config/editor-schema.ts): the extension's own diagnostics report
// every schema problem as `vistool config validate` does, and VS Code would otherwise say each again.
function writeEditorSchema() {
  if (!existsSync('dist/cli.js')) return;
  const result = spawnSync(process.execPath, ['bin/vistool.js', 'config', 'schema', '--for-editor'], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`vistool config schema failed: ${result.stderr}`);
  writeFileSync('dist/run-config.schema.json', result.stdout);
}
