/**
 * Writes calls and answers in each format the parser reads, so that a valid call written here
 * reads back identically through parseAction. Used for SFT warm-up data (gold calls written as
 * a model should write them), for prompts, and by the round-trip tests.
 */
import type { ToolCall } from '../tools/types.js';
import { focusFamily, isTerminateName, pythonSignature } from './tool-names.js';
import type { ActionFormat, AnswerStyle } from './types.js';

export interface FormatOptions {
  /** OpenThinkIMG's "thought" field (default empty). */
  thought?: string;
}

/**
 * One call as a model would write it. Throws when the call cannot be written in the format:
 * ReFocus Python can only call the known tools, with keyword names that are Python identifiers.
 */
export function formatToolCall(call: ToolCall, format: ActionFormat, options: FormatOptions = {}): string {
  if (isTerminateName(call.name)) {
    throw new Error(`formatToolCall: ${call.name} is how an answer is written, not a tool call; use formatAnswer(answer, 'terminate')`);
  }
  switch (format) {
    case 'hermes':
      return `<tool_call>\n${safeJson({ name: call.name, arguments: call.arguments })}\n</tool_call>`;
    case 'openthinkimg':
      return safeJson({ thought: options.thought ?? '', actions: [{ name: call.name, arguments: call.arguments }] });
    case 'refocus':
      return `\`\`\`python\n${pythonCall(call)}\n\`\`\``;
  }
}

/** How an answer is written in each style; a list is joined with `||`. */
export function formatAnswer(answer: string | string[], style: AnswerStyle): string {
  const text = Array.isArray(answer) ? answer.join('||') : answer;
  switch (style) {
    case 'answer_tag':
      return `<answer>${text}</answer>`;
    case 'final_answer':
      return `FINAL ANSWER: ${text}. TERMINATE`;
    case 'boxed':
      return `\\boxed{${text}}`;
    case 'terminate':
      return `Terminate(ans=${pythonLiteral(text)})`;
  }
}

/**
 * JSON with `<` escaped, so that no string value can contain a tag such as </tool_call> or
 * <think> that would change how the message reads.
 */
function safeJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, "\\u003c").replace(/`/g, "\\u0060");
}

function pythonCall(call: ToolCall): string {
  const signature = pythonSignature(call.name);
  if (!signature) throw new Error(`formatToolCall: ${call.name} is not a known tool, so it cannot be written as a ReFocus Python call`);
  const family = focusFamily(call.name);
  const parts = ['image_1'];
  const entries = Object.entries(call.arguments);
  if (family !== null && Object.prototype.hasOwnProperty.call(call.arguments, family)) {
    parts.push(pythonLiteral(call.arguments[family]), `${family}_bbox`);
  }
  for (const [key, value] of entries) {
    if (family !== null && key === family) continue;
    if (!isKeywordName(key) || (Object.prototype.hasOwnProperty.call(signature.keywords, key) && signature.keywords[key]?.kind !== 'argument')) {
      throw new Error(`formatToolCall: argument "${key}" of ${call.name} cannot be written as a Python keyword argument`);
    }
    const target = signature.keywords[key];
    if (target?.kind === 'argument' && target.key !== key) {
      throw new Error(`formatToolCall: argument "${key}" of ${call.name} would read back as "${target.key}"`);
    }
    parts.push(`${key}=${pythonLiteral(value)}`);
  }
  const variable = family !== null ? `image_with_focused_${family}` : 'edited_image';
  return `${variable} = ${call.name}(${parts.join(', ')})\ndisplay(${variable})`;
}

const PYTHON_KEYWORDS = new Set(
  'False None True and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield'.split(' '),
);

function isKeywordName(key: string): boolean {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) && !PYTHON_KEYWORDS.has(key);
}

/** A JSON value as a Python literal the restricted reader reads back to the same value. */
function pythonLiteral(value: unknown): string {
  if (value === null) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error(`formatToolCall: ${value} has no literal form`);
    return Object.is(value, -0) ? '-0.0' : JSON.stringify(value);
  }
  if (typeof value === 'string') return safeJson(value);
  if (Array.isArray(value)) return `[${value.map(pythonLiteral).join(', ')}]`;
  if (typeof value === 'object') {
    return `{${Object.entries(value as Record<string, unknown>).map(([k, v]) => `${safeJson(k)}: ${pythonLiteral(v)}`).join(', ')}}`;
  }
  throw new Error(`formatToolCall: a ${typeof value} has no literal form`);
}
