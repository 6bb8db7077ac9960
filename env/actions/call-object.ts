/**
 * Reads one call written as a JSON value — `{"name": ..., "arguments": {...}}` — into a
 * ToolCall, an answer (a call named Terminate is OpenThinkIMG's way to answer), or an error
 * in the VISTA classes: E1 not a call object / arguments not JSON, E2 name or arguments
 * missing, E3 arguments (or name) of the wrong type. Tool names are not checked here: the
 * registry does that, with the list of valid names.
 *
 * Also accepted, as models emit them: "parameters" for "arguments", arguments as a JSON
 * string, and the OpenAI shape `{"type": "function", "function": {...}}`.
 */
import type { ErrorClass } from '../core/errors.js';
import type { ToolCall } from '../tools/types.js';
import { answerFromValue } from './answer-text.js';
import { isPlainObject, parseJsonText } from './json-span.js';
import { isTerminateName } from './tool-names.js';

export type CallReading =
  | { kind: 'call'; call: ToolCall }
  | { kind: 'answer'; answer: string | string[] }
  | { kind: 'error'; class: ErrorClass; message: string; tool?: string };

function fail(errorClass: ErrorClass, message: string, tool?: string): CallReading {
  return tool === undefined ? { kind: 'error', class: errorClass, message } : { kind: 'error', class: errorClass, message, tool };
}

/** `example` is the expected form in the format the model used, shown at the end of every error. */
export function readCallObject(value: unknown, example: string): CallReading {
  if (!isPlainObject(value)) {
    const got = Array.isArray(value) ? 'a list' : value === null ? 'null' : `a ${typeof value}`;
    return fail('E1', `a tool call must be one JSON object with "name" and "arguments", but this was ${got}. Write it like ${example}`);
  }
  const inner = value['function'];
  const call = !('name' in value) && isPlainObject(inner) ? inner : value;

  if (!('name' in call)) return fail('E2', `the tool call has no "name". Write it like ${example}`);
  const name = call['name'];
  if (typeof name !== 'string') return fail('E3', `"name" must be a string (the tool's name), not ${describe(name)}. Write it like ${example}`);
  if (name.trim() === '') return fail('E2', `the tool call's "name" is empty. Write it like ${example}`);

  const key = 'arguments' in call ? 'arguments' : 'parameters' in call ? 'parameters' : null;
  if (key === null) return fail('E2', `the call to ${name} has no "arguments". Write it like ${example}`, name);
  let args = call[key];
  if (typeof args === 'string') {
    if (args.trim() === '') {
      args = {};
    } else {
      const parsed = parseJsonText(args);
      if (!parsed.ok) return fail('E1', `the "${key}" of ${name} is a string that is not valid JSON: ${parsed.message}. Give an object instead, like ${example}`, name);
      args = parsed.value;
    }
  }
  if (!isPlainObject(args)) {
    return fail('E3', `the "${key}" of ${name} must be a JSON object of named values, not ${describe(args)}. Write it like ${example}`, name);
  }

  if (isTerminateName(name)) {
    const raw = 'ans' in args ? args['ans'] : 'answer' in args ? args['answer'] : undefined;
    const answer = raw === undefined ? null : answerFromValue(raw);
    if (answer === null) return fail('E2', `${name} needs the answer in "ans", e.g. {"name": "Terminate", "arguments": {"ans": "7"}}`, name);
    return { kind: 'answer', answer };
  }
  return { kind: 'call', call: { name, arguments: args } };
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  return `a ${typeof value}`;
}
