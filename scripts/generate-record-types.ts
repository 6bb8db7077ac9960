/**
 * Writes protocol/rollout-record.ts, protocol/metrics-line.ts, protocol/annotation.ts, protocol/reward-config.ts and
 * protocol/run-config.ts from their JSON Schemas (schemas/, and the reward module's own), so the
 * TypeScript side reads the records and the configs through the same definitions the Python side
 * validates against (and types its config from, trainer/vistool_trainer/config.py).
 * `npm run gen:types` rewrites the files; test/protocol/record-schemas.test.ts fails when a
 * checked-in file differs from what its schema gives.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { compile, type JSONSchema } from 'json-schema-to-typescript';

const ROOT = join(__dirname, '..');

/**
 * `resolved`: the form code reads after validation, where every key with a default is present
 * (the loaders fill defaults), so the type marks it required. `title` names the type.
 */
interface GeneratedType {
  schema: string;
  output: string;
  title?: string;
  resolved?: boolean;
  /** string[] rather than a tuple per length for arrays with maxItems (the annotation's tags). */
  plainArrays?: boolean;
}

export const GENERATED_TYPES: readonly GeneratedType[] = [
  { schema: 'schemas/rollout-record.schema.json', output: 'protocol/rollout-record.ts' },
  { schema: 'schemas/metrics-line.schema.json', output: 'protocol/metrics-line.ts' },
  { schema: 'schemas/annotation.schema.json', output: 'protocol/annotation.ts', plainArrays: true },
  { schema: 'env/rewards/config.schema.json', output: 'protocol/reward-config.ts', title: 'RewardConfig', resolved: true },
  { schema: 'schemas/run-config.schema.json', output: 'protocol/run-config.ts', title: 'RunConfig', resolved: true },
];

const readSchema = (path: string): JSONSchema => JSON.parse(readFileSync(join(ROOT, path), 'utf8')) as JSONSchema;

/**
 * Every key with a default required, at every depth. A section that references another schema
 * (`allOf: [{$ref}]`, the run config's rewards) becomes that schema's generated type by name,
 * imported beside it, so the reward config is typed once.
 */
function resolvedSchema(schema: JSONSchema, imports: Set<string>): JSONSchema {
  const walk = (node: JSONSchema): JSONSchema => {
    const ref = node.allOf?.find((part) => typeof part.$ref === 'string')?.$ref;
    const named = ref === undefined ? undefined : GENERATED_TYPES.find((t) => ref.endsWith(t.schema.replace(/^schemas\//, '')));
    if (named?.title) {
      imports.add(`import type { ${named.title} } from './${named.output.replace(/^protocol\//, '').replace(/\.ts$/, '.js')}';`);
      return { description: node.description, tsType: named.title };
    }
    if (!node.properties) return node;
    const properties = Object.fromEntries(Object.entries(node.properties).map(([key, sub]) => [key, walk(sub)]));
    const required = Object.entries(node.properties).filter(([, sub]) => sub.default !== undefined).map(([key]) => key);
    return { ...node, properties, required: [...new Set([...((node.required as string[] | undefined) ?? []), ...required])] };
  };
  return walk(schema);
}

export async function generatedSource(schemaPath: string): Promise<string> {
  const entry = GENERATED_TYPES.find((t) => t.schema === schemaPath);
  const read = readSchema(schemaPath);
  const imports = new Set<string>();
  const schema = { ...(entry?.resolved ? resolvedSchema(read, imports) : read), ...(entry?.title ? { title: entry.title } : {}) };
  const banner = `/**\n * Generated from ${schemaPath} by scripts/generate-record-types.ts (npm run gen:types).\n * Do not edit: change the schema and regenerate.\n */`;
  const source = await compile(schema, String(schema.title), {
    bannerComment: banner,
    additionalProperties: false,
    unreachableDefinitions: true,
    // An array's item limits stay in the schema (validated there) where a type asks: as tuples they are noise.
    ignoreMinAndMaxItems: entry?.plainArrays === true,
    format: true,
    style: { singleQuote: true, printWidth: 120 },
  });
  return imports.size === 0 ? source : source.replace(`${banner}\n`, `${banner}\n\n${[...imports].join('\n')}\n`);
}

async function main(): Promise<void> {
  for (const { schema, output } of GENERATED_TYPES) {
    writeFileSync(join(ROOT, output), await generatedSource(schema));
    process.stdout.write(`wrote ${output}\n`);
  }
}

if (require.main === module) void main();
