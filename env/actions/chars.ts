/**
 * Character codes and classes for the scanners, which compare `charCodeAt` numbers rather than
 * one-character strings: no allocation per step, and no NaN/string mix for the JIT to handle.
 */

export const Code = {
  Tab: 9,
  Newline: 10,
  Return: 13,
  Space: 32,
  Quote: 34,
  Apostrophe: 39,
  OpenParen: 40,
  CloseParen: 41,
  Backslash: 92,
  Underscore: 95,
  OpenBracket: 91,
  CloseBracket: 93,
  Backtick: 96,
  OpenBrace: 123,
  CloseBrace: 125,
} as const;

/** Space, tab, carriage return or newline (what JSON calls whitespace). */
export function isBlankCode(c: number): boolean {
  return c === Code.Space || c === Code.Tab || c === Code.Newline || c === Code.Return;
}

export function isAsciiLetterCode(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
}

export function isAsciiDigitCode(c: number): boolean {
  return c >= 48 && c <= 57;
}

/** Letters, digits and `_`: the characters of an identifier. */
export function isWordCode(c: number): boolean {
  return isAsciiLetterCode(c) || isAsciiDigitCode(c) || c === 95;
}
