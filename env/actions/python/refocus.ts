/**
 * Turns a ReFocus / VTool-R1 Python block into structured tool calls, by walking the syntax
 * tree of syntax.ts with abstract values — never by running it. What a name may hold is
 * tracked (an image, the metadata boxes, or a literal value); tool calls become ToolCalls in
 * evaluation order (inner calls first, as Python would run them).
 *
 * `image_with_focused_columns = focus_on_columns_with_mask(image_1, ["Country", "Wins"], columns_bbox)`
 * becomes `{name: "focus_on_columns_with_mask", arguments: {columns: ["Country", "Wins"]}}`.
 * The boxes argument is accepted and dropped: boxes always come from the task's metadata.
 *
 * A block is all or nothing: one refused statement refuses the whole block (its statements
 * depend on each other), with one error that says what was not allowed and that code is never
 * run. Unknown functions are refused here (their argument mapping is unknown), unlike unknown
 * names in JSON calls, which the registry judges.
 */
import type { ErrorClass } from '../../core/errors.js';
import type { ToolCall } from '../../tools/types.js';
import { answerFromValue } from '../answer-text.js';
import { codeIsNeverRun, DEFAULT_EXAMPLES, type ActionExamples } from '../examples.js';
import { setOwn } from '../json-span.js';
import { KNOWN_TOOL_NAMES, isTerminateName, pythonSignature, type ParameterTarget } from '../tool-names.js';
import { parseBlock, type Expr, type Statement } from './syntax.js';

type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

type Value = { kind: 'image' } | { kind: 'boxes' } | { kind: 'data'; value: JsonValue } | { kind: 'none' };

/** Names every ReFocus notebook defines before the model's code runs. */
const PREDEFINED_BOXES = ['columns_bbox', 'rows_bbox', 'x_values_bbox', 'y_values_bbox'];
const NO_OP_FUNCTIONS = new Set(['display', 'print']);

export interface PythonBlockResult {
  calls: { call: ToolCall; offset: number }[];
  answers: { answer: string | string[]; offset: number }[];
  /** Names bound to edited images by this block. */
  imageVariables: string[];
}

export type PythonReading = { ok: true; result: PythonBlockResult } | { ok: false; class: ErrorClass; message: string; offset: number; tool?: string };

class Refusal extends Error {
  constructor(
    readonly errorClass: ErrorClass,
    message: string,
    readonly offset: number,
    readonly tool?: string,
  ) {
    super(message);
  }
}

/**
 * Reads one block. Offsets in the result are relative to `source`. `imageVariables` are
 * names that already hold images (from earlier blocks or turns); the block may add more.
 */
export function readPythonBlock(source: string, imageVariables: ReadonlySet<string>,
  examples: Readonly<ActionExamples> = DEFAULT_EXAMPLES): PythonReading {
  const neverRun = codeIsNeverRun(examples);
  const parsed = parseBlock(source);
  if (!parsed.ok) return { ok: false, class: 'E1', message: `${parsed.message}. ${neverRun}`, offset: parsed.offset };
  const walker = new Walker(imageVariables);
  try {
    for (const statement of parsed.value) walker.statement(statement);
  } catch (err) {
    if (!(err instanceof Refusal)) throw err;
    const failure: PythonReading = { ok: false, class: err.errorClass, message: `${err.message}. ${neverRun}`, offset: err.offset };
    if (err.tool !== undefined) failure.tool = err.tool;
    return failure;
  }
  return { ok: true, result: walker.result };
}

class Walker {
  readonly result: PythonBlockResult = { calls: [], answers: [], imageVariables: [] };
  private readonly names = new Map<string, Value>();

  constructor(imageVariables: ReadonlySet<string>) {
    for (const name of imageVariables) this.names.set(name, { kind: 'image' });
    for (const name of PREDEFINED_BOXES) this.names.set(name, { kind: 'boxes' });
  }

  statement(statement: Statement): void {
    if (statement.kind === 'expr') {
      this.evaluate(statement.value);
      return;
    }
    const target = statement.target;
    if (NO_OP_FUNCTIONS.has(target) || pythonSignature(target) !== undefined || isTerminateName(target)) {
      throw new Refusal('E1', `cannot assign to ${target}: it is a function name`, statement.offset);
    }
    const value = this.evaluate(statement.value);
    this.names.set(target, value);
    if (value.kind === 'image' && !this.result.imageVariables.includes(target)) this.result.imageVariables.push(target);
  }

  private evaluate(expr: Expr): Value {
    switch (expr.kind) {
      case 'literal':
        return { kind: 'data', value: expr.value };
      case 'name':
        return this.lookup(expr.name, expr.offset);
      case 'list':
        return { kind: 'data', value: expr.items.map((item) => this.data(item, 'a list item')) };
      case 'dict': {
        const object: { [key: string]: JsonValue } = {};
        for (const entry of expr.entries) {
          const key = this.data(entry.key, 'a dict key');
          if (typeof key !== 'string' && typeof key !== 'number') throw new Refusal('E1', 'dict keys must be strings or numbers', entry.key.offset);
          setOwn(object, String(key), this.data(entry.value, 'a dict value'));
        }
        return { kind: 'data', value: object };
      }
      case 'call':
        return this.call(expr);
    }
  }

  private lookup(name: string, offset: number): Value {
    const value = this.names.get(name);
    if (value !== undefined) return value;
    if (/^image(_\d+)?$/.test(name)) return { kind: 'image' };
    if (NO_OP_FUNCTIONS.has(name) || pythonSignature(name) !== undefined) {
      throw new Refusal('E1', `${name} is a function: call it, e.g. ${name}(...)`, offset);
    }
    throw new Refusal('E1', `name ${name} is not defined: use image_1, ${PREDEFINED_BOXES.join(', ')}, or a variable assigned earlier in this code`, offset);
  }

  /** A value that must be literal data (list items, labels, coordinates). */
  private data(expr: Expr, what: string): JsonValue {
    const value = this.evaluate(expr);
    if (value.kind === 'data') return value.value;
    const held = value.kind === 'image' ? 'an image' : value.kind === 'boxes' ? 'the bounding boxes' : 'None from display/print';
    throw new Refusal('E3', `${what} must be a literal value, but this is ${held}`, expr.offset);
  }

  private call(expr: Extract<Expr, { kind: 'call' }>): Value {
    const name = expr.callee;
    if (NO_OP_FUNCTIONS.has(name)) {
      for (const arg of expr.args) this.evaluate(arg);
      for (const keyword of expr.keywords) this.evaluate(keyword.value);
      return { kind: 'none' };
    }
    if (isTerminateName(name)) {
      const keyword = expr.keywords.find((k) => k.name === 'ans' || k.name === 'answer');
      const source = expr.args[0] ?? keyword?.value;
      const answer = source === undefined ? null : answerFromValue(this.data(source, `the answer of ${name}`));
      if (answer === null) throw new Refusal('E2', `${name} needs the answer, e.g. ${name}(ans="7")`, expr.offset, name);
      this.result.answers.push({ answer, offset: expr.offset });
      return { kind: 'none' };
    }
    const signature = pythonSignature(name);
    if (signature === undefined) {
      throw new Refusal(
        'E1',
        `${name}(...) is not allowed: the only functions that can be called are ${KNOWN_TOOL_NAMES.join(', ')}, display and print`,
        expr.offset,
        name,
      );
    }
    const args: Record<string, unknown> = {};
    if (expr.args.length > signature.positional.length) {
      throw new Refusal('E2', `${name} takes at most ${signature.positional.length} positional arguments ${signature.display}, but got ${expr.args.length}`, expr.offset, name);
    }
    for (let i = 0; i < expr.args.length; i++) {
      const target = signature.positional[i];
      const value = expr.args[i];
      if (target && value) this.place(name, args, target, value, `#${i + 1}`);
    }
    for (const keyword of expr.keywords) {
      const target = Object.prototype.hasOwnProperty.call(signature.keywords, keyword.name) ? signature.keywords[keyword.name] : undefined;
      this.place(name, args, target ?? { kind: 'argument', key: keyword.name }, keyword.value, keyword.name);
    }
    this.result.calls.push({ call: { name, arguments: args }, offset: expr.offset });
    return { kind: 'image' };
  }

  /** Puts one Python argument where the signature says: checks the image, drops the boxes, keeps data. */
  private place(name: string, args: Record<string, unknown>, target: ParameterTarget, value: Expr, label: string): void {
    if (target.kind === 'image') {
      if (this.evaluate(value).kind !== 'image') {
        throw new Refusal('E3', `the image argument of ${name} must be an image (image_1 or a variable holding an edited image)`, value.offset, name);
      }
    } else if (target.kind === 'boxes') {
      this.evaluate(value); // accepted and dropped: boxes come from the task's metadata
    } else {
      if (Object.prototype.hasOwnProperty.call(args, target.key)) {
        throw new Refusal('E2', `${name} got ${label} twice (as ${target.key})`, value.offset, name);
      }
      setOwn(args, target.key, this.data(value, `argument ${label} of ${name}`));
    }
  }
}
