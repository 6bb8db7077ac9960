/**
 * The run config as text: parsed into a tree that remembers where every key and value is, so a
 * problem found by JSON pointer can be shown at its line and column, and a fix can be turned
 * into text edits. Strict JSON, as the trainer reads it (Python's json.loads): comments and
 * trailing commas are syntax errors; duplicate keys are reported (the last one would win).
 *
 * Uses jsonc-parser, the parser VS Code's own JSON support is built on.
 */
import { modify, type Node, type ParseError, parseTree, printParseErrorCode } from 'jsonc-parser';
import { type ConfigFix, type ConfigProblem, type Position, pointerOf, problem } from './problem.js';

export interface TextEdit {
  offset: number;
  length: number;
  content: string;
}

export class JsonText {
  readonly root: Node | undefined;
  readonly syntaxProblems: ConfigProblem[] = [];
  private readonly lineStarts: number[] = [0];

  constructor(readonly text: string) {
    for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) this.lineStarts.push(i + 1);
    const errors: ParseError[] = [];
    this.root = parseTree(text, errors, { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false });
    for (const error of errors) {
      const name = printParseErrorCode(error.error);
      this.syntaxProblems.push({
        ...problem({ code: `syntax/${name}`, severity: 'error', source: 'syntax', pointer: '', message: syntaxMessage(name) }),
        start: this.position(error.offset),
        end: this.position(error.offset + Math.max(1, error.length)),
      });
    }
    if (this.root && this.syntaxProblems.length === 0) this.findDuplicateKeys(this.root, []);
  }

  position(offset: number): Position {
    const clamped = Math.max(0, Math.min(offset, this.text.length));
    let low = 0;
    let high = this.lineStarts.length - 1;
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if ((this.lineStarts[mid] ?? 0) <= clamped) low = mid;
      else high = mid - 1;
    }
    return { offset: clamped, line: low + 1, column: clamped - (this.lineStarts[low] ?? 0) + 1 };
  }

  /** The value node at a pointer, or undefined when the text does not have it. */
  node(pointer: string): Node | undefined {
    return this.nodeAt(parsePointer(pointer));
  }

  /** Walks the tree: a segment indexes an array or names a key (the last of duplicates, as JSON.parse keeps). */
  private nodeAt(parts: string[]): Node | undefined {
    let node = this.root;
    for (const part of parts) {
      if (!node) return undefined;
      if (node.type === 'array') {
        node = /^(0|[1-9]\d*)$/.test(part) ? node.children?.[Number(part)] : undefined;
      } else if (node.type === 'object') {
        const property = (node.children ?? []).filter((p) => p.children?.[0]?.value === part && p.children.length === 2).at(-1);
        node = property?.children?.[1];
      } else {
        return undefined;
      }
    }
    return node;
  }

  /** A pointer as a jsonc-parser path: array indexes as numbers. */
  private pathOf(pointer: string): (string | number)[] {
    const parts = parsePointer(pointer);
    return parts.map((part, i) => (this.nodeAt(parts.slice(0, i))?.type === 'array' ? Number(part) : part));
  }

  has(pointer: string): boolean {
    return this.node(pointer) !== undefined;
  }

  /**
   * Adds start/end to a problem: its key or value when the text has it; otherwise the key of
   * the nearest ancestor that is there (a default that is wrong because of a sibling), or the
   * first character of the document.
   */
  locate(found: ConfigProblem): ConfigProblem {
    if (found.start) return found;
    let parts = parsePointer(found.pointer);
    let exact = true;
    while (true) {
      const node = this.nodeAt(parts);
      if (node) {
        const keyNode = node.parent?.type === 'property' ? node.parent.children?.[0] : undefined;
        const target = exact && found.target === 'value' ? node : (keyNode ?? node);
        const span = target === this.root ? { offset: target.offset, length: 1 } : target;
        return { ...found, start: this.position(span.offset), end: this.position(span.offset + span.length) };
      }
      if (parts.length === 0) return { ...found, start: this.position(0), end: this.position(Math.min(1, this.text.length)) };
      parts = parts.slice(0, -1);
      exact = false;
    }
  }

  /** The text edits that apply a fix (for a quick fix, or `vistool config validate --fix` later). */
  editsFor(fix: ConfigFix): TextEdit[] {
    const formattingOptions = { insertSpaces: true, tabSize: 2, eol: '\n' };
    const path = this.pathOf(fix.pointer);
    switch (fix.kind) {
      case 'set':
        return modify(this.text, path, fix.value, { formattingOptions });
      case 'remove':
        return modify(this.text, path, undefined, { formattingOptions });
      case 'rename': {
        const keyNode = this.node(fix.pointer)?.parent?.children?.[0];
        return keyNode ? [{ offset: keyNode.offset, length: keyNode.length, content: JSON.stringify(fix.newKey) }] : [];
      }
    }
  }

  private findDuplicateKeys(node: Node, path: string[]): void {
    if (node.type === 'object') {
      const seen = new Set<string>();
      for (const property of node.children ?? []) {
        const [key, value] = property.children ?? [];
        if (!key || typeof key.value !== 'string') continue;
        const name = key.value;
        if (seen.has(name)) {
          this.syntaxProblems.push({
            ...problem({
              code: 'syntax/duplicate-key',
              severity: 'error',
              source: 'syntax',
              pointer: pointerOf(...path, name),
              target: 'key',
              message: `duplicate key '${name}': the trainer keeps only the last one. Remove one of them.`,
            }),
            start: this.position(key.offset),
            end: this.position(key.offset + key.length),
          });
        }
        seen.add(name);
        if (value) this.findDuplicateKeys(value, [...path, name]);
      }
    } else if (node.type === 'array') {
      (node.children ?? []).forEach((child, i) => this.findDuplicateKeys(child, [...path, String(i)]));
    }
  }
}

export function parsePointer(pointer: string): string[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function syntaxMessage(code: string): string {
  switch (code) {
    case 'InvalidCommentToken':
      return 'comments are not allowed: the trainer reads run configs as strict JSON. Move the note into a "name" or delete it.';
    case 'ValueExpected':
      return 'a value is expected here (a trailing comma, or a key without a value?). Run configs are strict JSON.';
    case 'PropertyNameExpected':
      return 'a key in double quotes is expected here (a trailing comma before } is not allowed in strict JSON).';
    case 'CommaExpected':
      return 'a comma is expected between entries.';
    case 'ColonExpected':
      return "a ':' is expected after the key.";
    case 'CloseBraceExpected':
      return "a '}' is expected: an object is not closed.";
    case 'CloseBracketExpected':
      return "a ']' is expected: an array is not closed.";
    case 'EndOfFileExpected':
      return 'unexpected text after the end of the config object.';
    default:
      return `not valid JSON (${code}).`;
  }
}
