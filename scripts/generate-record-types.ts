/**
 * Writes protocol/rollout-record.ts, protocol/metrics-line.ts and protocol/run-config.ts from the
 * JSON Schemas in schemas/, so the TypeScript side reads the records and the config through the
 * same definitions the Python side validates against (and types its config from,
 * trainer/vistool_trainer/config.py). `npm run gen:types` rewrites the files; test/protocol/generated-types
 * fails when a checked-in file differs from what the schema gives.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { compile, type JSONSchema } from 'json-schema-to-typescript';

const ROOT = join(__dirname, '..');

export const GENERATED_TYPES: ReadonlyArray<{ schema: string; output: string }> = [
  { schema: 'schemas/rollout-record.schema.json', output: 'protocol/rollout-record.ts' },
  { schema: 'schemas/metrics-line.schema.json', output: 'protocol/metrics-line.ts' },
  { schema: 'schemas/run-config.schema.json', output: 'protocol/run-config.ts' },
];

const readSchema = (path: string): JSONSchema => JSON.parse(readFileSync(join(ROOT, path), 'utf8')) as JSONSchema;

/**
 * The run config as code reads it after validation: every key with a default is present (the
 * loaders fill defaults), so the type marks it required; the reward section's own schema
 * (referenced with `allOf: [{$ref}]`) is read from this checkout and put in place.
 */
function resolvedRunConfig(schema: JSONSchema): JSONSchema {
  const walk = (node: JSONSchema): JSONSchema => {
    let out: JSONSchema = { ...node };
    const ref = out.allOf?.find((part) => typeof part.$ref === 'string')?.$ref;
    if (ref !== undefined) {
      const { $schema: _, title: __, ...target } = readSchema(join('schemas', ref));
      out = { ...target, ...out, allOf: undefined };
      delete out.allOf;
    }
    if (out.properties) {
      const properties = Object.fromEntries(Object.entries(out.properties).map(([key, sub]) => [key, walk(sub)]));
      const required = Object.entries(out.properties).filter(([, sub]) => sub.default !== undefined).map(([key]) => key);
      out = { ...out, properties, required: [...new Set([...(out.required as string[] | undefined ?? []), ...required])] };
    }
    return out;
  };
  return { ...walk(schema), title: 'RunConfig' };
}

export async function generatedSource(schemaPath: string): Promise<string> {
  const read = readSchema(schemaPath);
  const schema = schemaPath.endsWith('run-config.schema.json') ? resolvedRunConfig(read) : read;
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
