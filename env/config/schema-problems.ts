/**
 * Schema violations (ajv errors against schemas/run-config.schema.json) as problems that say
 * what was expected, with quick fixes where the fix is obvious: rename a misspelt key, remove
 * an unknown one, pick the nearest allowed value, turn "8" into 8.
 */
import type { ErrorObject } from 'ajv';
import { closestName } from './closest-name.js';
import { type ConfigFix, type ConfigProblem, dottedPath, problem } from './problem.js';
import { schemaAt, schemaErrors } from './run-config-schema.js';

function describe(value: unknown): string {
  const text = JSON.stringify(value);
  return text === undefined ? String(value) : text.length > 40 ? `${text.slice(0, 37)}...` : text;
}

function valueAt(root: unknown, pointer: string): unknown {
  let value = root;
  for (const part of pointer.split('/').slice(1)) {
    const key = part.replace(/~1/g, '/').replace(/~0/g, '~');
    value = typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;
  }
  return value;
}

function fromAjv(error: ErrorObject, config: unknown): ConfigProblem {
  const pointer = error.instancePath;
  const where = dottedPath(pointer);
  const value = valueAt(config, pointer);
  const node = schemaAt(pointer);
  const hint = node?.description ? ` (${node.description.replace(/\.$/, '')})` : '';
  switch (error.keyword) {
    case 'additionalProperties': {
      const key = String((error.params as { additionalProperty: string }).additionalProperty);
      const keyPointer = `${pointer}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`;
      const known = Object.keys(node?.properties ?? {});
      const guess = closestName(key, known);
      const fixes: ConfigFix[] = guess
        ? [{ kind: 'rename', title: `Rename '${key}' to '${guess}'`, pointer: keyPointer, newKey: guess }]
        : [{ kind: 'remove', title: `Remove the unknown key '${key}'`, pointer: keyPointer }];
      const scope = pointer === '' ? 'at the top level' : `in ${where}`;
      const suggestion = guess ? `did you mean '${guess}'? ` : '';
      return problem({
        code: 'schema/unknown-key',
        severity: 'error',
        source: 'schema',
        pointer: keyPointer,
        target: 'key',
        message: `unknown key '${key}' ${scope}: ${suggestion}Unknown keys are errors. Known keys: ${known.join(', ')}.`,
        fixes,
      });
    }
    case 'enum': {
      const allowed = (error.params as { allowedValues: unknown[] }).allowedValues;
      const guess = typeof value === 'string' ? closestName(value, allowed.filter((a): a is string => typeof a === 'string')) : undefined;
      return problem({
        code: 'schema/enum',
        severity: 'error',
        source: 'schema',
        pointer,
        message: `${where} is ${describe(value)}; it must be one of ${allowed.map((a) => describe(a)).join(', ')}${hint}.`,
        fixes: guess !== undefined ? [{ kind: 'set', title: `Change to ${describe(guess)}`, pointer, value: guess }] : [],
      });
    }
    case 'type': {
      const expected = String((error.params as { type: string }).type);
      const fixes: ConfigFix[] = [];
      if (typeof value === 'string' && /(number|integer)/.test(expected) && value.trim() !== '' && Number.isFinite(Number(value))) {
        const number = Number(value);
        if (expected.includes('number') || Number.isInteger(number)) fixes.push({ kind: 'set', title: `Change to the number ${number}`, pointer, value: number });
      }
      if (typeof value === 'string' && expected.includes('boolean') && (value === 'true' || value === 'false')) {
        fixes.push({ kind: 'set', title: `Change to ${value}`, pointer, value: value === 'true' });
      }
      return problem({ code: 'schema/type', severity: 'error', source: 'schema', pointer, message: `${where} must be ${expected.replace(/,/g, ' or ')}, not ${describe(value)}${hint}.`, fixes });
    }
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum': {
      const { comparison, limit } = error.params as { comparison: string; limit: number };
      return problem({ code: `schema/${error.keyword}`, severity: 'error', source: 'schema', pointer, message: `${where} is ${describe(value)}; it must be ${comparison} ${limit}${hint}.` });
    }
    case 'pattern':
      return problem({
        code: 'schema/pattern',
        severity: 'error',
        source: 'schema',
        pointer,
        message: `${where} is ${describe(value)}, which does not match ${(error.params as { pattern: string }).pattern}${hint}${node?.default !== undefined ? `; for example ${describe(node.default)}` : ''}.`,
      });
    case 'minLength':
      return problem({ code: 'schema/min-length', severity: 'error', source: 'schema', pointer, message: `${where} must not be empty${hint}.` });
    default:
      return problem({ code: `schema/${error.keyword}`, severity: 'error', source: 'schema', pointer, message: `${where} ${error.message ?? 'is invalid'}${hint}.` });
  }
}

export function schemaProblems(config: unknown): ConfigProblem[] {
  const errors = schemaErrors(config);
  // ajv reports a type error once per alternative of a union type; keep one per place and keyword.
  const seen = new Set<string>();
  const problems: ConfigProblem[] = [];
  for (const error of errors) {
    const found = fromAjv(error, config);
    const key = `${found.pointer}|${found.code}`;
    if (seen.has(key)) continue;
    seen.add(key);
    problems.push(found);
  }
  return problems;
}
