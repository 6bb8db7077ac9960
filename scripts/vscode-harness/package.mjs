// `npm run package`: builds the bundles and packs the extension as a platform-targeted .vsix
// (sharp and onnxruntime-node carry native binaries) for the platform npm installed for:
// out/vsix/vistool-<version>-<target>.vsix. Prints the .vsix path on its last line.
// Packaging for another platform needs that platform's node_modules (npm install there).
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..', '..');
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const platform = { linux: 'linux', darwin: 'darwin', win32: 'win32' }[process.platform];
const arch = { x64: 'x64', arm64: 'arm64' }[process.arch];
if (!platform || !arch) {
  console.error(`vistool package: no VS Code target for ${process.platform}-${process.arch}`);
  process.exit(2);
}
const target = `${platform}-${arch}`;
const outDir = join(root, 'out', 'vsix');
mkdirSync(outDir, { recursive: true });
const vsix = join(outDir, `vistool-${manifest.version}-${target}.vsix`);

function run(command, args) {
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) {
    console.error(`vistool package: ${command} ${args.join(' ')} failed (exit ${result.status ?? result.signal})`);
    process.exit(1);
  }
}

run(process.execPath, ['esbuild.mjs']);
// The base ignore list plus this target's onnxruntime-node binaries.
const ignoreFile = join(outDir, `.vscodeignore-${target}`);
writeFileSync(ignoreFile, `${readFileSync(join(root, '.vscodeignore'), 'utf8')}!node_modules/onnxruntime-node/bin/napi-v6/${platform}/${arch}/**\n`);
run(process.execPath, [
  join(root, 'node_modules', '@vscode', 'vsce', 'vsce'),
  'package',
  '--target', target,
  '--out', vsix,
  '--ignoreFile', ignoreFile,
  '--allow-missing-repository',
  '--skip-license',
  '--no-update-package-json',
]);
console.log(vsix);
