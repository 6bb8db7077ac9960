/**
 * The grammar of the restricted Python reader: a recursive-descent parser over the tokens,
 * for a tiny subset — `name = expression` and expression statements, where an expression is a
 * literal (string, number, True/False/None, list, tuple, dict), a name, or a call of a plain
 * name with positional and keyword arguments. It builds a syntax tree and evaluates nothing.
 *
 * Everything else gets a precise refusal: imports, def/class/lambda and other keywords,
 * attribute access (os.system), subscripts, comprehensions, operators, *args, sets, walrus.
 * Nesting is capped so hostile input cannot exhaust the stack.
 */
import { MAX_NESTING_DEPTH } from '../limits.js';
import { tokenize, type Token } from './tokens.js';

export type Expr =
  | { kind: 'literal'; value: null | boolean | number | string; offset: number }
  | { kind: 'name'; name: string; offset: number }
  | { kind: 'list'; items: Expr[]; offset: number }
  | { kind: 'dict'; entries: { key: Expr; value: Expr }[]; offset: number }
  | { kind: 'call'; callee: string; args: Expr[]; keywords: Keyword[]; offset: number };

export interface Keyword {
  name: string;
  value: Expr;
  offset: number;
}

export type Statement = { kind: 'assign'; target: string; value: Expr; offset: number } | { kind: 'expr'; value: Expr; offset: number };

export type Parsed<T> = { ok: true; value: T } | { ok: false; message: string; offset: number };

class SyntaxRefusal extends Error {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(message);
  }
}

/** Python keywords, each refused with the reason a model can act on. */
const KEYWORD_REASONS: Readonly<Record<string, string>> = {
  import: 'import statements are not allowed (the tools are already available)',
  from: 'import statements are not allowed (the tools are already available)',
  def: 'defining functions (def) is not allowed',
  class: 'defining classes is not allowed',
  lambda: 'lambda expressions are not allowed',
  for: 'loops (for) are not allowed; call the tool once with a list of labels',
  while: 'loops (while) are not allowed',
  if: 'conditionals (if) are not allowed',
  elif: 'conditionals (elif) are not allowed',
  else: 'conditionals (else) are not allowed',
  with: 'with statements are not allowed',
  try: 'try statements are not allowed',
  except: 'try statements are not allowed',
  finally: 'try statements are not allowed',
  return: 'return is not allowed',
  yield: 'yield is not allowed',
  await: 'await is not allowed',
  async: 'async code is not allowed',
  global: 'global is not allowed',
  nonlocal: 'nonlocal is not allowed',
  del: 'del is not allowed',
  assert: 'assert is not allowed',
  raise: 'raise is not allowed',
  pass: 'pass is not needed',
  break: 'break is not allowed',
  continue: 'continue is not allowed',
  not: 'operators (not) are not allowed; write literal values',
  and: 'operators (and) are not allowed; write literal values',
  or: 'operators (or) are not allowed; write literal values',
  in: 'operators (in) are not allowed; write literal values',
  is: 'operators (is) are not allowed; write literal values',
};

const AUGMENTED = new Set(['+=', '-=', '*=', '/=', '%=', '&=', '|=', '^=', '@=']);
const OPERATOR_START = '+-*/%@<>!~^&|=';

// A Map, not an object literal: `name in {...}` would find toString, constructor and __proto__ on the
// prototype chain and turn a Python name into a JavaScript function.
const CONSTANTS: ReadonlyMap<string, null | boolean> = new Map([['True', true], ['False', false], ['None', null]]);

export function parseBlock(source: string): Parsed<Statement[]> {
  const tokens = tokenize(source);
  if (!tokens.ok) return tokens;
  return run(() => new Parser(tokens.tokens).block());
}

/** Parses a single expression that must span the whole source (used for `Terminate(...)` in prose). */
export function parseExpression(source: string): Parsed<Expr> {
  const tokens = tokenize(source);
  if (!tokens.ok) return tokens;
  return run(() => new Parser(tokens.tokens).loneExpression());
}

function run<T>(body: () => T): Parsed<T> {
  try {
    return { ok: true, value: body() };
  } catch (err) {
    if (err instanceof SyntaxRefusal) return { ok: false, message: err.message, offset: err.offset };
    throw err;
  }
}

class Parser {
  private at = 0;

  constructor(private readonly tokens: Token[]) {}

  block(): Statement[] {
    const statements: Statement[] = [];
    for (;;) {
      while (this.peek().kind === 'newline' || this.isOp(';')) this.at++;
      if (this.peek().kind === 'end') return statements;
      statements.push(this.statement());
      const after = this.peek();
      if (after.kind === 'newline' || after.kind === 'end' || this.isOp(';')) continue;
      throw this.unexpected(after, 'after a statement');
    }
  }

  loneExpression(): Expr {
    while (this.peek().kind === 'newline') this.at++;
    const expr = this.expression(0);
    while (this.peek().kind === 'newline') this.at++;
    const after = this.peek();
    if (after.kind !== 'end') throw this.unexpected(after, 'after the expression');
    return expr;
  }

  private statement(): Statement {
    const first = this.peek();
    if (first.kind === 'name' && this.peek(1).kind === 'op' && this.peek(1).text === '=') {
      this.refuseKeyword(first);
      if (CONSTANTS.has(first.text)) throw new SyntaxRefusal(`cannot assign to ${first.text}`, first.offset);
      this.at += 2;
      const value = this.expression(0);
      return { kind: 'assign', target: first.text, value, offset: first.offset };
    }
    if (first.kind === 'name' && this.peek(1).kind === 'op' && this.peek(1).text === ',') {
      throw new SyntaxRefusal('tuple assignment (a, b = ...) is not allowed: assign one name per statement', first.offset);
    }
    if (first.kind === 'op' && first.text === '@') throw new SyntaxRefusal('decorators are not allowed', first.offset);
    const value = this.expression(0);
    const after = this.peek();
    if (after.kind === 'op' && after.text === '=') {
      throw new SyntaxRefusal('only a plain name can be assigned to (name = value)', after.offset);
    }
    return { kind: 'expr', value, offset: first.offset };
  }

  private expression(depth: number): Expr {
    if (depth > MAX_NESTING_DEPTH) {
      throw new SyntaxRefusal(`expression nested more than ${MAX_NESTING_DEPTH} levels deep`, this.peek().offset);
    }
    const token = this.peek();
    let expr: Expr;
    if (token.kind === 'string') {
      const parts: string[] = [];
      while (this.peek().kind === 'string') parts.push(this.next().text);
      expr = { kind: 'literal', value: parts.join(''), offset: token.offset };
    } else if (token.kind === 'number') {
      this.at++;
      expr = { kind: 'literal', value: token.number ?? 0, offset: token.offset };
    } else if (token.kind === 'op' && (token.text === '-' || token.text === '+') && this.peek(1).kind === 'number') {
      this.at++;
      const number = this.next();
      const value = number.number ?? 0;
      expr = { kind: 'literal', value: token.text === '-' ? -value : value, offset: token.offset };
    } else if (token.kind === 'name') {
      expr = this.nameOrCall(depth);
    } else if (token.kind === 'op' && token.text === '[') {
      this.at++;
      expr = { kind: 'list', items: this.sequence(']', depth), offset: token.offset };
    } else if (token.kind === 'op' && token.text === '(') {
      expr = this.parenthesised(depth);
    } else if (token.kind === 'op' && token.text === '{') {
      expr = this.dict(depth);
    } else {
      throw this.unexpected(token, 'where a value was expected');
    }
    this.refusePostfix(expr);
    return expr;
  }

  private nameOrCall(depth: number): Expr {
    const token = this.next();
    this.refuseKeyword(token);
    if (CONSTANTS.has(token.text)) return { kind: 'literal', value: CONSTANTS.get(token.text) ?? null, offset: token.offset };
    if (!this.isOp('(')) return { kind: 'name', name: token.text, offset: token.offset };
    this.at++;
    const args: Expr[] = [];
    const keywords: Keyword[] = [];
    while (!this.isOp(')')) {
      const item = this.peek();
      if (item.kind === 'op' && (item.text === '*' || item.text === '**')) {
        throw new SyntaxRefusal('argument unpacking (*args, **kwargs) is not allowed: write the arguments out', item.offset);
      }
      if (item.kind === 'name' && this.peek(1).kind === 'op' && this.peek(1).text === '=') {
        this.refuseKeyword(item);
        this.at += 2;
        if (keywords.some((k) => k.name === item.text)) throw new SyntaxRefusal(`keyword argument ${item.text} is given twice`, item.offset);
        keywords.push({ name: item.text, value: this.expression(depth + 1), offset: item.offset });
      } else {
        if (keywords.length > 0) throw new SyntaxRefusal('a positional argument cannot follow a keyword argument', item.offset);
        args.push(this.expression(depth + 1));
      }
      this.refuseComprehension();
      if (this.isOp(',')) this.at++;
      else if (!this.isOp(')')) throw this.unexpected(this.peek(), `in the arguments of ${token.text}(...)`);
    }
    this.at++;
    return { kind: 'call', callee: token.text, args, keywords, offset: token.offset };
  }

  private parenthesised(depth: number): Expr {
    const open = this.next();
    if (this.isOp(')')) {
      this.at++;
      return { kind: 'list', items: [], offset: open.offset };
    }
    const first = this.expression(depth + 1);
    this.refuseComprehension();
    if (this.isOp(')')) {
      this.at++;
      return first;
    }
    if (!this.isOp(',')) throw this.unexpected(this.peek(), 'inside parentheses');
    this.at++;
    return { kind: 'list', items: [first, ...this.sequence(')', depth)], offset: open.offset };
  }

  /** Items up to `close`, after the opening bracket has been consumed. */
  private sequence(close: string, depth: number): Expr[] {
    const items: Expr[] = [];
    while (!this.isOp(close)) {
      const item = this.peek();
      if (item.kind === 'op' && item.text === '*') throw new SyntaxRefusal('unpacking (*x) is not allowed: write the items out', item.offset);
      items.push(this.expression(depth + 1));
      this.refuseComprehension();
      if (this.isOp(',')) this.at++;
      else if (!this.isOp(close)) throw this.unexpected(this.peek(), `in a list (expected , or ${close})`);
    }
    this.at++;
    return items;
  }

  private dict(depth: number): Expr {
    const open = this.next();
    const entries: { key: Expr; value: Expr }[] = [];
    while (!this.isOp('}')) {
      if (this.isOp('**')) throw new SyntaxRefusal('dict unpacking (**x) is not allowed', this.peek().offset);
      const key = this.expression(depth + 1);
      if (!this.isOp(':')) {
        const token = this.peek();
        if (token.kind === 'op' && (token.text === ',' || token.text === '}')) {
          throw new SyntaxRefusal('sets are not allowed: use a list [...]', open.offset);
        }
        this.refuseComprehension();
        throw this.unexpected(token, 'in a dict (expected :)');
      }
      this.at++;
      const value = this.expression(depth + 1);
      this.refuseComprehension();
      entries.push({ key, value });
      if (this.isOp(',')) this.at++;
      else if (!this.isOp('}')) throw this.unexpected(this.peek(), 'in a dict (expected , or })');
    }
    this.at++;
    return { kind: 'dict', entries, offset: open.offset };
  }

  /** After a value: attribute access, subscripts and calls of results are refused by name. */
  private refusePostfix(expr: Expr): void {
    const token = this.peek();
    if (token.kind !== 'op') return;
    const subject = expr.kind === 'name' ? expr.name : expr.kind === 'call' ? `${expr.callee}(...)` : 'a value';
    if (token.text === '.') {
      const attr = this.peek(1);
      const shown = attr.kind === 'name' ? `${subject}.${attr.text}` : `${subject}.`;
      throw new SyntaxRefusal(`attribute access (${shown}) is not allowed`, token.offset);
    }
    if (token.text === '[') throw new SyntaxRefusal(`subscripts (${subject}[...]) are not allowed`, token.offset);
    if (token.text === '(') throw new SyntaxRefusal(`calling the result of ${subject} is not allowed`, token.offset);
  }

  private refuseComprehension(): void {
    const token = this.peek();
    if (token.kind === 'name' && (token.text === 'for' || token.text === 'async')) {
      throw new SyntaxRefusal('comprehensions ([... for ... in ...]) are not allowed: write the list out', token.offset);
    }
  }

  private refuseKeyword(token: Token): void {
    const reason = KEYWORD_REASONS[token.text];
    if (token.kind === 'name' && reason !== undefined && Object.prototype.hasOwnProperty.call(KEYWORD_REASONS, token.text)) {
      throw new SyntaxRefusal(reason, token.offset);
    }
  }

  private unexpected(token: Token, where: string): SyntaxRefusal {
    if (token.kind === 'indent') {
      return new SyntaxRefusal('unexpected indentation: blocks such as if, for, def or with are not allowed; write one statement per line', token.offset);
    }
    if (token.kind === 'end' || token.kind === 'newline') return new SyntaxRefusal(`the code ends unexpectedly ${where}: a bracket or argument is missing`, token.offset);
    if (token.kind === 'op') {
      if (token.text === ':=') return new SyntaxRefusal('assignment expressions (:=) are not allowed', token.offset);
      if (AUGMENTED.has(token.text)) return new SyntaxRefusal(`augmented assignment (${token.text}) is not allowed`, token.offset);
      if (token.text !== '=' && OPERATOR_START.includes(token.text.charAt(0))) {
        return new SyntaxRefusal(`operators (${token.text}) are not allowed: write literal values`, token.offset);
      }
      return new SyntaxRefusal(`unexpected "${token.text}" ${where}`, token.offset);
    }
    if (token.kind === 'name') {
      const reason = Object.prototype.hasOwnProperty.call(KEYWORD_REASONS, token.text) ? KEYWORD_REASONS[token.text] : undefined;
      if (reason !== undefined) return new SyntaxRefusal(reason, token.offset);
      return new SyntaxRefusal(`unexpected name ${token.text} ${where}: separate statements with a new line`, token.offset);
    }
    return new SyntaxRefusal(`unexpected ${token.kind} ${where}`, token.offset);
  }

  private peek(ahead = 0): Token {
    return this.tokens[this.at + ahead] ?? this.tokens[this.tokens.length - 1] ?? { kind: 'end', text: '', offset: 0 };
  }

  private next(): Token {
    const token = this.peek();
    this.at++;
    return token;
  }

  private isOp(text: string): boolean {
    const token = this.peek();
    return token.kind === 'op' && token.text === text;
  }
}
