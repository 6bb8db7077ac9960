/**
 * Checking a tool call's arguments against the tool's JSON Schema (ajv, draft-07) and turning
 * what is wrong into one message the model can act on, classed E2 (missing or extra argument),
 * E3 (wrong type or shape) or E4 (value out of range). Only validates: it never applies a tool.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { actionError, type ActionError } from '../core/errors.js';
import type { PixelMetadata } from './metadata.js';
import { inlineJson } from './outcome.js';
import type { ToolDefinition } from './types.js';

const ajv = new Ajv({ allErrors: true, strict: true });
const compiled = new Map<string, ValidateFunction>();

function validatorFor(tool: ToolDefinition): ValidateFunction {
  let validate = compiled.get(tool.name);
  if (!validate) {
    validate = ajv.compile(tool.parameters);
    compiled.set(tool.name, validate);
  }
  return validate;
}

/** Null when `args` fits the tool's schema; otherwise the most useful single error. */
export function validateArguments(tool: ToolDefinition, args: Record<string, unknown>, meta?: PixelMetadata): ActionError | null {
  const validate = validatorFor(tool);
  if (validate(args)) return null;
  const errors = validate.errors ?? [];
  const example = tool.exampleArguments?.(meta) ?? {};
  const help = (prop: string): string => {
    const schema = tool.parameters.properties[prop] as { description?: string } | undefined;
    return schema?.description ?? 'see the tool description';
  };
  const eg = (prop: string): string => (prop in example ? `, e.g. ${inlineJson(example[prop])}` : '');

  const missing = errors.find((e) => e.keyword === 'required')?.params.missingProperty as string | undefined;
  const extra = errors.find((e) => e.keyword === 'additionalProperties')?.params.additionalProperty as string | undefined;
  if (missing !== undefined && extra !== undefined) {
    return actionError('E2', `${tool.name} does not take '${extra}' — it needs '${missing}': ${help(missing)}${eg(missing)}`, tool.name);
  }
  if (missing !== undefined) return actionError('E2', `${tool.name} needs '${missing}': ${help(missing)}${eg(missing)}`, tool.name);
  if (extra !== undefined) {
    const accepted = Object.keys(tool.parameters.properties).map((p) => `'${p}' (${help(p)})`).join(', ');
    return actionError('E2', `${tool.name} does not take '${extra}'; its arguments are: ${accepted}`, tool.name);
  }

  const first = errors.find((e) => !isRangeError(e)) ?? errors[0];
  if (!first) return actionError('E3', `${tool.name}: the arguments do not match the tool's schema`, tool.name);
  const prop = propertyOf(first);
  const got = inlineJson(prop === '' ? args : args[prop]);
  if (isRangeError(first)) return actionError('E4', `${tool.name}: '${prop}' must be ${range(tool, prop)}; got ${got}`, tool.name);
  return actionError('E3', `${tool.name}: '${prop}' must be ${help(prop)}${eg(prop)}; got ${got}`, tool.name);
}

/** "between 1 and 4", "at least 0", from the property's own schema. */
function range(tool: ToolDefinition, prop: string): string {
  const schema = (tool.parameters.properties[prop] ?? {}) as { minimum?: number; maximum?: number };
  if (schema.minimum !== undefined && schema.maximum !== undefined) return `between ${schema.minimum} and ${schema.maximum}`;
  if (schema.minimum !== undefined) return `at least ${schema.minimum}`;
  if (schema.maximum !== undefined) return `at most ${schema.maximum}`;
  return 'in range';
}

function isRangeError(error: ErrorObject): boolean {
  return ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum'].includes(error.keyword);
}

/** The top-level argument an error is about: "/columns/0" → "columns". */
function propertyOf(error: ErrorObject): string {
  const segment = error.instancePath.split('/')[1] ?? '';
  return segment.replace(/~1/g, '/').replace(/~0/g, '~');
}
