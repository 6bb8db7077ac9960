/**
 * The run-config JSON Schema (schemas/run-config.schema.json, draft-07) — the single source of
 * truth shared with the editor's jsonValidation and the trainer — compiled once with ajv, and
 * the defaults it declares filled into a config exactly as the trainer does
 * (run_config.py `_fill_defaults`). The `rewards` section is the reward module's own schema
 * (env/rewards/config.schema.json), referenced by `$ref` relative to the run schema's `$id`;
 * it is registered under that URL here, so nothing is ever fetched.
 *
 * Never edits the schemas: changes to the config's shape happen in the JSON files.
 */
import Ajv, { type ErrorObject } from 'ajv';
import rewardSchemaJson from '../rewards/config.schema.json';
import schemaJson from '../../schemas/run-config.schema.json';

export interface SchemaNode {
  type?: string | string[];
  description?: string;
  default?: unknown;
  enum?: unknown[];
  properties?: Record<string, SchemaNode>;
  additionalProperties?: boolean;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  pattern?: string;
  $ref?: string;
  allOf?: SchemaNode[];
}

export const runConfigSchema = schemaJson as unknown as SchemaNode & Record<string, unknown>;

/** Schema files a `$ref` may name, by their path relative to the repository root. */
const LOCAL_SCHEMAS: Record<string, SchemaNode> = {
  'env/rewards/config.schema.json': rewardSchemaJson as unknown as SchemaNode,
  'schemas/run-config.schema.json': runConfigSchema,
};
const SCHEMA_BASE = new URL(String(runConfigSchema.$id ?? 'https://vistool.dev/schemas/run-config.schema.json'));

/** The schema a `$ref` (relative to the run schema's `$id`) names; an error names a ref this checkout lacks. */
function referenced(ref: string): SchemaNode {
  const url = new URL(ref, SCHEMA_BASE);
  const local = url.origin === SCHEMA_BASE.origin ? LOCAL_SCHEMAS[url.pathname.replace(/^\//, '')] : undefined;
  if (!local) throw new Error(`the run-config schema refers to ${ref} (${url.href}), which is not one of the local schemas ${Object.keys(LOCAL_SCHEMAS).join(', ')}; add it to LOCAL_SCHEMAS in env/config/run-config-schema.ts`);
  return local;
}

const ajv = new Ajv({ allErrors: true, strict: false });
for (const [path, schema] of Object.entries(LOCAL_SCHEMAS)) if (schema !== runConfigSchema) ajv.addSchema(schema, new URL(`/${path}`, SCHEMA_BASE).href);
const validate = ajv.compile(runConfigSchema);

/** A node with its `$ref` / `allOf: [{$ref}]` merged in (its own description and default win), as the trainer resolves it. */
export function resolvedNode(node: SchemaNode): SchemaNode {
  const refs = [...(node.allOf ?? []).flatMap((part) => (part.$ref ? [part.$ref] : [])), ...(node.$ref ? [node.$ref] : [])];
  if (refs.length === 0) return node;
  const merged: SchemaNode = { ...node };
  delete merged.allOf;
  delete merged.$ref;
  for (const ref of refs) {
    for (const [key, value] of Object.entries(referenced(ref))) {
      // The referenced file's own $schema and $id describe that file, not this node.
      if (key === '$schema' || key === '$id') continue;
      if (!(key in merged)) (merged as Record<string, unknown>)[key] = value;
    }
  }
  return merged;
}

export function schemaErrors(value: unknown): ErrorObject[] {
  return validate(value) ? [] : [...(validate.errors ?? [])];
}

/** The schema node at a JSON pointer made of property names, or undefined. */
export function schemaAt(pointer: string): SchemaNode | undefined {
  let node: SchemaNode | undefined = runConfigSchema;
  for (const part of pointer.split('/').slice(1)) {
    const next: SchemaNode | undefined = node ? resolvedNode(node).properties?.[part] : undefined;
    node = next ? resolvedNode(next) : undefined;
  }
  return node;
}

/**
 * The run-config schema with every `$ref` inlined and no `$id`: one file that any tool can use
 * without resolving anything. Editors need it: VS Code resolves a relative `$ref` against the
 * `$id` (https://vistool.dev/...), which it will not fetch, and then validates nothing.
 * `vistool config schema` prints it; the build writes it to dist/run-config.schema.json for the
 * extension's jsonValidation.
 */
export function selfContainedSchema(): Record<string, unknown> {
  const inline = (node: SchemaNode): SchemaNode => {
    const resolved = resolvedNode(node);
    const copy: SchemaNode & Record<string, unknown> = { ...resolved };
    if (resolved.properties) copy.properties = Object.fromEntries(Object.entries(resolved.properties).map(([key, sub]) => [key, inline(sub)]));
    const items = (resolved as Record<string, unknown>).items;
    if (items && typeof items === 'object' && !Array.isArray(items)) copy.items = inline(items as SchemaNode);
    return copy;
  };
  const { $id: _id, ...rest } = inline(runConfigSchema) as Record<string, unknown>;
  return {
    $schema: rest.$schema,
    $comment: 'Generated from schemas/run-config.schema.json with its $refs inlined (vistool config schema). Edit the source files, not this one.',
    ...rest,
  };
}

/** A copy of `config` with every absent key that has a default filled in, recursively into objects. */
export function withDefaults(config: Record<string, unknown>, schema: SchemaNode = runConfigSchema): Record<string, unknown> {
  const filled: Record<string, unknown> = { ...config };
  for (const [key, node] of Object.entries(resolvedNode(schema).properties ?? {})) {
    const sub = resolvedNode(node);
    if (!(key in filled) && 'default' in sub) filled[key] = structuredClone(sub.default);
    const value = filled[key];
    if (sub.type === 'object' && typeof value === 'object' && value !== null && !Array.isArray(value)) {
      filled[key] = withDefaults(value as Record<string, unknown>, sub);
    }
  }
  return filled;
}
