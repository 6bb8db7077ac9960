/**
 * Writes protocol/rollout-record.ts and protocol/metrics-line.ts from the JSON Schemas in
 * schemas/, so the TypeScript side reads the records through the same definitions the Python
 * side validates against. `npm run gen:types` rewrites the files; test/protocol/generated-types
 * fails when a checked-in file differs from what the schema gives.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { compile, type JSONSchema } from 'json-schema-to-typescript';

const ROOT = join(__dirname, '..');

export const GENERATED_TYPES: ReadonlyArray<{ schema: string; output: string }> = [
  { schema: 'schemas/rollout-record.schema.json', output: 'protocol/rollout-record.ts' },
  { schema: 'schemas/metrics-line.schema.json', output: 'protocol/metrics-line.ts' },
];

export async function generatedSource(schemaPath: string): Promise<string> {
  const schema = JSON.parse(readFileSync(join(ROOT, schemaPath), 'utf8')) as JSONSchema;
  const banner = `/**\n * Generated from ${schemaPath} by scripts/generate-record-types.ts (npm run gen:types).\n * Do not edit: change the schema and regenerate.\n */`;
  return compile(schema, String(schema.title), {
    bannerComment: banner,
    additionalProperties: false,
    unreachableDefinitions: true,
    format: true,
    style: { singleQuote: true, printWidth: 120 },
  });
}

async function main(): Promise<void> {
  for (const { schema, output } of GENERATED_TYPES) {
    writeFileSync(join(ROOT, output), await generatedSource(schema));
    process.stdout.write(`wrote ${output}\n`);
  }
}

if (require.main === module) void main();
