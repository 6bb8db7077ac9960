/**
 * Checks a run config's text: JSON syntax, the schema (schemas/run-config.schema.json), then the
 * semantic checks, and places every problem at its line and column. The one entry point for
 * `vistool config validate` and the VS Code diagnostics.
 *
 * Synchronous and cheap (a parse, an ajv call, a few stat calls), so an editor can run it on
 * every keystroke. Never writes anything.
 */
import type { EnvironmentFacts } from './environment-facts.js';
import { JsonText } from './json-text.js';
import { type ConfigProblem, problem } from './problem.js';
import { withDefaults } from './run-config-schema.js';
import { schemaProblems } from './schema-problems.js';
import { semanticProblems } from './semantic-checks.js';

export interface RunConfigValidation {
  problems: ConfigProblem[];
  /** The parsed text (null when it is not JSON). */
  raw: unknown;
  /** The config with defaults filled in, when the text is a JSON object. */
  config: Record<string, unknown> | null;
  text: JsonText;
}

const SEVERITY_ORDER = { error: 0, warning: 1, info: 2 } as const;

export function validateRunConfigText(source: string, options: { baseDir: string; facts: EnvironmentFacts }): RunConfigValidation {
  const text = new JsonText(source);
  const syntaxBroken = text.syntaxProblems.some((p) => p.code !== 'syntax/duplicate-key');
  if (syntaxBroken) return { problems: sortProblems(text.syntaxProblems), raw: null, config: null, text };
  const raw: unknown = JSON.parse(source);
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    const found = text.locate(problem({ code: 'schema/type', severity: 'error', source: 'schema', pointer: '', message: 'a run config is a JSON object ({"name": ..., "rl": {...}}); see schemas/run-config.schema.json.' }));
    return { problems: [found], raw, config: null, text };
  }
  const config = withDefaults(raw as Record<string, unknown>);
  const problems = [
    ...text.syntaxProblems,
    ...schemaProblems(raw),
    ...semanticProblems({ raw: raw as Record<string, unknown>, config, baseDir: options.baseDir, facts: options.facts }),
  ].map((p) => text.locate(p));
  return { problems: sortProblems(problems), raw, config, text };
}

function sortProblems(problems: ConfigProblem[]): ConfigProblem[] {
  return [...problems].sort((a, b) => (a.start?.offset ?? 0) - (b.start?.offset ?? 0) || SEVERITY_ORDER[a.severity] - SEVERITY_ORDER[b.severity]);
}

/** `file:line:col: severity: message [code]` — the line the CLI prints per problem. */
export function formatProblem(file: string, found: ConfigProblem): string {
  const where = found.start ? `${found.start.line}:${found.start.column}` : '1:1';
  return `${file}:${where}: ${found.severity}: ${found.message} [${found.code}]`;
}

/**
 * The problems an editor reports itself (extension/config/config-diagnostics.ts): every one the
 * CLI prints, with the same message, severity and code, but JSON syntax, which the editor's JSON
 * support reports anyway.
 */
export function editorProblems(problems: readonly ConfigProblem[]): ConfigProblem[] {
  return problems.filter((p) => p.source !== 'syntax');
}
