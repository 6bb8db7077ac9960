/**
 * What the run-config checks report: a problem with a severity, a message that says how to fix
 * it, a JSON pointer to what is wrong, and — where the fix is obvious — a fix that an editor
 * can apply as a quick fix. Ranges are added by locate.ts once the text is known.
 *
 * Types only.
 */

export type Severity = 'error' | 'warning' | 'info';

/** syntax: not JSON; schema: against schemas/run-config.schema.json; semantic: the checks in semantic-checks.ts. */
export type ProblemSource = 'syntax' | 'schema' | 'semantic';

export type ConfigFix =
  /** Set the value at `pointer` (creating the key when it is absent). */
  | { kind: 'set'; title: string; pointer: string; value: unknown }
  /** Remove the key at `pointer`. */
  | { kind: 'remove'; title: string; pointer: string }
  /** Rename the key at `pointer` to `newKey`, keeping its value. */
  | { kind: 'rename'; title: string; pointer: string; newKey: string };

export interface Position {
  /** 0-based, in UTF-16 code units like JavaScript strings and VS Code. */
  offset: number;
  /** 1-based line and column, as compilers print them. */
  line: number;
  column: number;
}

export interface ConfigProblem {
  /** Stable id of the check, e.g. 'rl/clip-high-below-low' or 'schema/enum'. */
  code: string;
  severity: Severity;
  source: ProblemSource;
  message: string;
  /** JSON pointer (RFC 6901) of the offending value; '' is the whole document. */
  pointer: string;
  /** What to underline: the key (an unknown key) or the value. */
  target: 'key' | 'value';
  fixes: ConfigFix[];
  /** Where it is in the text (set by locateProblems). */
  start?: Position;
  end?: Position;
}

export function problem(fields: Omit<ConfigProblem, 'fixes' | 'target'> & Partial<Pick<ConfigProblem, 'fixes' | 'target'>>): ConfigProblem {
  return { target: 'value', fixes: [], ...fields };
}

/** `/rl/clip_ratio_high` → `rl.clip_ratio_high` (for messages). */
export function dottedPath(pointer: string): string {
  if (pointer === '') return '(top level)';
  return pointer
    .slice(1)
    .split('/')
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .join('.');
}

export function pointerOf(...parts: (string | number)[]): string {
  return parts.map((p) => '/' + String(p).replace(/~/g, '~0').replace(/\//g, '~1')).join('');
}
