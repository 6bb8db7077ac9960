#!/usr/bin/env node
// Entry point for `npx vistool`: runs the bundled CLI (build it with `npm run build`).
const path = require('node:path');
const fs = require('node:fs');
const bundle = path.join(__dirname, '..', 'dist', 'cli.js');
if (!fs.existsSync(bundle)) {
  process.stderr.write(`vistool: ${bundle} is missing. Run \`npm ci && npm run build\` in ${path.dirname(__dirname)} first.\n`);
  process.exit(2);
}
require(bundle).main(process.argv.slice(2)).then(
  (code) => { process.exitCode = code; },
  (err) => { process.stderr.write(`vistool: ${err && err.stack ? err.stack : String(err)}\n`); process.exitCode = 1; },
);
