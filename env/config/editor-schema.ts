/**
 * The run-config schema as the editor's JSON support gets it (contributes.jsonValidation →
 * dist/run-config.schema.json): the same keys, descriptions, defaults and suggested values, with
 * every validating keyword taken out. Why: the extension's own diagnostics report every schema
 * problem with the CLI's message, severity and code (`vistool config validate`'s: an unknown key is
 * an error), so VS Code's JSON validation of the same schema would say each again, as a warning in
 * other words (issue 44, 2.9). What VS Code still takes from this schema is what only it does:
 * hovers, key completion, suggested values (an `enum` becomes `examples`).
 *
 * Walks schema nodes only (properties, items, definitions, ...), never a `properties` map's keys,
 * so a key named `type` or `format` stays. Pure.
 */

/** Keywords that only validate: an instance always satisfies a node without them. */
const VALIDATING = new Set([
  'type', 'enum', 'const', 'required', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf',
  'minLength', 'maxLength', 'pattern', 'format', 'minItems', 'maxItems', 'uniqueItems', 'contains', 'minProperties',
  'maxProperties', 'propertyNames', 'dependencies', 'dependentRequired', 'not', 'if', 'then', 'else',
]);
/** Keywords whose value is a map of name → schema. */
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', 'definitions', '$defs']);
/** Keywords whose value is a schema or a list of schemas. */
const SCHEMA_VALUES = new Set(['items', 'additionalItems', 'additionalProperties', 'allOf', 'anyOf', 'oneOf']);

type Schema = Record<string, unknown>;
const isObject = (value: unknown): value is Schema => typeof value === 'object' && value !== null && !Array.isArray(value);

/** One schema node without its validating keywords; `enum` kept as `examples`, `oneOf` as `anyOf` (stripped branches all match). */
export function editorSchema(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(editorSchema);
  if (!isObject(node)) return node;
  const out: Schema = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'enum' && Array.isArray(value) && !('examples' in node)) out.examples = value;
    if (VALIDATING.has(key)) continue;
    // additionalProperties: false only forbids; a schema for the extra values describes them.
    if (key === 'additionalProperties' && !isObject(value)) continue;
    if (SCHEMA_MAPS.has(key) && isObject(value)) out[key] = Object.fromEntries(Object.entries(value).map(([name, schema]) => [name, editorSchema(schema)]));
    else if (SCHEMA_VALUES.has(key)) out[key === 'oneOf' ? 'anyOf' : key] = editorSchema(value);
    else out[key] = value;
  }
  return out;
}
