/**
 * A form generated from a tool's JSON Schema (draft-07 object schema, as env/tools declares
 * them): label lists become checkboxes offered from the image's metadata (with a free-text box
 * for anything else), fixed-length number arrays become one input per number, points (a label
 * or "x, y") a text box each with the diagram's labels offered, numbers and booleans get their
 * own inputs, anything else is JSON text. Reading the form only collects
 * values; the engine validates them, so a wrong value comes back as the same E2–E4 error a
 * model would get.
 */
import type { ToolInfo } from '../../protocol/panel-protocol.js';
import { h } from '../shared/dom.js';
import { isRecord } from '../../protocol/guards.js';

export type FieldKind = 'labels' | 'string-list' | 'number-tuple' | 'number' | 'boolean' | 'enum' | 'string' | 'point' | 'point-pair' | 'json';

interface PropertySchema {
  type?: string;
  enum?: unknown[];
  items?: { type?: string; anyOf?: unknown[] };
  anyOf?: unknown[];
  minItems?: number;
  maxItems?: number;
  minimum?: number;
  maximum?: number;
  default?: unknown;
  description?: string;
}

function asSchema(value: unknown): PropertySchema {
  return isRecord(value) ? (value as PropertySchema) : {};
}

/** A point reference (env/tools/point-refs.ts): a label, or pixel coordinates [x, y]. */
function isPointSchema(schema: PropertySchema): boolean {
  return Array.isArray(schema.anyOf) && schema.anyOf.some((s) => asSchema(s).type === 'string') && schema.anyOf.some((s) => asSchema(s).type === 'array');
}

/** Which input a property gets; `labels` only when the image's metadata has labels for it. */
export function fieldKind(schemaValue: unknown, labels: string[] | undefined): FieldKind {
  const schema = asSchema(schemaValue);
  if (isPointSchema(schema)) return 'point';
  if (schema.type === 'array' && schema.items && isPointSchema(asSchema(schema.items)) && schema.minItems === 2 && schema.maxItems === 2) return 'point-pair';
  if (schema.type === 'array' && schema.items?.type === 'string') return labels && labels.length > 0 ? 'labels' : 'string-list';
  if (schema.type === 'array' && (schema.items?.type === 'number' || schema.items?.type === 'integer') && schema.minItems !== undefined && schema.minItems === schema.maxItems && schema.minItems <= 8) return 'number-tuple';
  if (schema.type === 'number' || schema.type === 'integer') return 'number';
  if (schema.type === 'boolean') return 'boolean';
  if (Array.isArray(schema.enum)) return 'enum';
  if (schema.type === 'string') return 'string';
  return 'json';
}

/** "a, b ,c" → ["a", "b", "c"]; empty pieces dropped. */
export function parseList(text: string): string[] {
  return text.split(',').map((s) => s.trim()).filter((s) => s !== '');
}

const TUPLE_NAMES: Record<string, string[]> = { bbox: ['x1', 'y1', 'x2', 'y2'] };

/** A point typed as a label ("A") or as coordinates ("120, 45" → [120, 45]). */
export function parsePointRef(text: string): string | [number, number] | undefined {
  const trimmed = text.trim();
  if (trimmed === '') return undefined;
  const xy = /^\[?\s*(-?\d+(?:\.\d+)?)\s*[,\s]\s*(-?\d+(?:\.\d+)?)\s*\]?$/.exec(trimmed);
  return xy ? [Number(xy[1]), Number(xy[2])] : trimmed;
}

interface Field {
  name: string;
  element: HTMLElement;
  /** undefined: left empty. */
  read(): { value?: unknown; error?: string };
  /** Puts a value in the field (a box dragged on the image, a replayed call's argument); false when this field cannot show it. */
  write?(value: unknown): boolean;
}

function numberInput(name: string, schema: PropertySchema, label: string): HTMLInputElement {
  return h('input', { type: 'number', step: 'any', name, 'aria-label': label, 'data-testid': `arg-${label}`, min: schema.minimum, max: schema.maximum, placeholder: schema.default !== undefined ? String(schema.default) : '' });
}

function readNumber(input: HTMLInputElement, label: string): { value?: number; error?: string } {
  if (input.value.trim() === '') return {};
  const value = Number(input.value);
  return Number.isFinite(value) ? { value } : { error: `${label} must be a number` };
}

function makeField(name: string, schemaValue: unknown, labels: string[] | undefined): Field {
  const schema = asSchema(schemaValue);
  switch (fieldKind(schemaValue, labels)) {
    case 'labels': {
      const boxes = (labels ?? []).map((label) => h('input', { type: 'checkbox', value: label, name, 'data-testid': 'label-option' }));
      const extra = h('input', { type: 'text', name: `${name}-extra`, placeholder: 'other labels, comma separated', 'aria-label': `other ${name}`, 'data-testid': `arg-${name}-extra` });
      return {
        name,
        element: h('div', { class: 'label-choices' }, ...boxes.map((box) => h('label', { class: 'label-choice' }, box, box.value)), extra),
        read: () => {
          const values = [...boxes.filter((b) => b.checked).map((b) => b.value), ...parseList(extra.value)];
          return values.length > 0 ? { value: values } : {};
        },
        write: (value) => {
          if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) return false;
          const known = new Set(boxes.map((b) => b.value));
          boxes.forEach((box) => (box.checked = value.includes(box.value)));
          // Labels the metadata does not know (a call that failed with E4) go in the text field, so the form shows the call as it was.
          extra.value = value.filter((v) => !known.has(v)).join(', ');
          return true;
        },
      };
    }
    case 'string-list': {
      const input = h('input', { type: 'text', name, placeholder: 'comma separated', 'aria-label': name, 'data-testid': `arg-${name}` });
      return {
        name,
        element: input,
        read: () => (parseList(input.value).length > 0 ? { value: parseList(input.value) } : {}),
        write: (value) => Array.isArray(value) && value.every((v) => typeof v === 'string') && ((input.value = value.join(', ')), true),
      };
    }
    case 'number-tuple': {
      const count = schema.minItems ?? 0;
      const names = TUPLE_NAMES[name] ?? Array.from({ length: count }, (_, i) => `${name}[${i}]`);
      const inputs = names.slice(0, count).map((label) => numberInput(name, {}, label));
      return {
        name,
        element: h('div', { class: 'tuple' }, ...inputs.map((input, i) => h('label', null, names[i], ' ', input))),
        read: () => {
          const parts = inputs.map((input, i) => readNumber(input, names[i] ?? name));
          if (parts.every((p) => p.value === undefined && !p.error)) return {};
          const error = parts.find((p) => p.error)?.error ?? (parts.some((p) => p.value === undefined) ? `${name} needs all ${count} numbers` : undefined);
          return error ? { error } : { value: parts.map((p) => p.value) };
        },
        write: (value) => {
          if (!Array.isArray(value) || value.length !== inputs.length || !value.every((v) => typeof v === 'number' && Number.isFinite(v))) return false;
          inputs.forEach((input, i) => {
            input.value = String(value[i]);
          });
          return true;
        },
      };
    }
    case 'point':
    case 'point-pair': {
      // One text box per point; the image's point labels are offered as suggestions.
      const list = labels && labels.length > 0 ? h('datalist', { id: `points-${name}` }, ...labels.map((label) => h('option', { value: label }))) : null;
      const count = fieldKind(schemaValue, labels) === 'point' ? 1 : 2;
      const inputs = Array.from({ length: count }, (_, i) => h('input', { type: 'text', name, placeholder: 'a label such as A, or x, y', 'aria-label': count === 1 ? name : `${name}[${i}]`, 'data-testid': count === 1 ? `arg-${name}` : `arg-${name}-${i}`, ...(list ? { list: `points-${name}` } : {}) }));
      return {
        name,
        element: h('div', { class: 'tuple' }, ...inputs, list),
        read: () => {
          const points = inputs.map((input) => parsePointRef(input.value));
          if (points.every((p) => p === undefined)) return {};
          if (points.some((p) => p === undefined)) return { error: `${name} needs ${count} points` };
          return { value: count === 1 ? points[0] : points };
        },
      };
    }
    case 'number': {
      const input = numberInput(name, schema, name);
      return { name, element: input, read: () => readNumber(input, name), write: (value) => typeof value === 'number' && Number.isFinite(value) && ((input.value = String(value)), true) };
    }
    case 'boolean': {
      const input = h('input', { type: 'checkbox', name, 'data-testid': `arg-${name}` });
      return { name, element: input, read: () => ({ value: input.checked }), write: (value) => typeof value === 'boolean' && ((input.checked = value), true) };
    }
    case 'enum': {
      const input = h('select', { name, 'data-testid': `arg-${name}` }, h('option', { value: '' }, '—'), ...(schema.enum ?? []).map((v) => h('option', { value: JSON.stringify(v) }, String(v))));
      return {
        name,
        element: input,
        read: () => (input.value === '' ? {} : { value: JSON.parse(input.value) as unknown }),
        write: (value) => (schema.enum ?? []).some((v) => JSON.stringify(v) === JSON.stringify(value)) && ((input.value = JSON.stringify(value)), true),
      };
    }
    case 'string': {
      const input = h('input', { type: 'text', name, 'data-testid': `arg-${name}` });
      return { name, element: input, read: () => (input.value === '' ? {} : { value: input.value }), write: (value) => typeof value === 'string' && ((input.value = value), true) };
    }
    case 'json': {
      const input = h('textarea', { name, rows: 3, placeholder: 'JSON value', 'data-testid': `arg-${name}` });
      return {
        name,
        element: input,
        read: () => {
          if (input.value.trim() === '') return {};
          try {
            return { value: JSON.parse(input.value) as unknown };
          } catch (err) {
            return { error: `${name} is not valid JSON (${(err as Error).message})` };
          }
        },
        write: (value) => ((input.value = JSON.stringify(value)), true),
      };
    }
  }
}

export interface ArgumentForm {
  element: HTMLElement;
  /** The arguments entered, or the first problem the form itself can see. */
  read(): { arguments: Record<string, unknown> } | { error: string };
  /** Whether the tool takes this argument as a fixed-length tuple of numbers (bbox), which a drag can fill. */
  hasTuple(name: string): boolean;
  /** Fills an argument's inputs; false when the form has no such field or it cannot take the value. */
  write(name: string, value: unknown): boolean;
}

export function argumentForm(tool: ToolInfo, labels: Record<string, string[]>): ArgumentForm {
  const required = new Set(tool.parameters.required);
  // Point arguments (through, endpoints, center, point) are offered the diagram's point labels.
  const labelsFor = (name: string, schema: unknown) => labels[name] ?? (['point', 'point-pair'].includes(fieldKind(schema, undefined)) ? labels.points : undefined);
  const fields = Object.entries(tool.parameters.properties).map(([name, schema]) => ({ field: makeField(name, schema, labelsFor(name, schema)), schema: asSchema(schema) }));
  const element = h(
    'div',
    { class: 'argument-form', 'data-tool': tool.name },
    ...fields.map(({ field, schema }) =>
      h('div', { class: 'form-row', 'data-arg': field.name },
        h('div', { class: 'form-label' }, h('code', null, field.name), required.has(field.name) ? h('span', { class: 'required', title: 'required' }, ' *') : null),
        field.element,
        schema.description ? h('div', { class: 'form-help muted' }, schema.description) : null,
      ),
    ),
  );
  return {
    element,
    read() {
      const args: Record<string, unknown> = {};
      for (const { field } of fields) {
        const { value, error } = field.read();
        if (error) return { error };
        if (value !== undefined) args[field.name] = value;
      }
      return { arguments: args };
    },
    hasTuple(name) {
      const found = fields.find(({ field }) => field.name === name);
      return found !== undefined && fieldKind(tool.parameters.properties[name], labels[name]) === 'number-tuple';
    },
    write(name, value) {
      return fields.find(({ field }) => field.name === name)?.field.write?.(value) ?? false;
    },
  };
}
