/**
 * The judge's prompt template: read from an editable file (default env/rewards/judge-prompt.md),
 * HTML comments stripped, placeholders {question} {gold} {prediction} filled in one pass — so an
 * answer that itself contains "{gold}" is sent verbatim, never expanded.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const PROMPT_PLACEHOLDERS = ['question', 'gold', 'prediction'] as const;
export type PromptFields = Record<(typeof PROMPT_PLACEHOLDERS)[number], string>;

export interface PromptTemplate {
  text: string;
  /** Where it was read from. */
  path: string;
  /** SHA-256 of the template text: part of the verdict cache key. */
  hash: string;
}

/**
 * Where the shipped prompt may be: next to this module when run from source, and under the
 * package root when this module is bundled into dist/ (the .md file is not bundled).
 */
function defaultPromptCandidates(): string[] {
  return [join(__dirname, 'judge-prompt.md'), resolve(__dirname, '..', 'env', 'rewards', 'judge-prompt.md'), resolve('env', 'rewards', 'judge-prompt.md')];
}

export function parsePromptTemplate(raw: string, path: string): PromptTemplate {
  const text = raw.replace(/<!--[\s\S]*?-->/gu, '').trim();
  const missing = PROMPT_PLACEHOLDERS.filter((name) => !text.includes(`{${name}}`));
  if (missing.length > 0) {
    throw new Error(
      `judge prompt ${path} lacks the placeholder(s) ${missing.map((m) => `{${m}}`).join(', ')}; the template must contain {question}, {gold} and {prediction}`,
    );
  }
  return { text, path, hash: createHash('sha256').update(text).digest('hex') };
}

export function loadPromptTemplate(promptFile: string | null): PromptTemplate {
  const candidates = promptFile === null ? defaultPromptCandidates() : [resolve(promptFile)];
  const found = candidates.find((candidate) => existsSync(candidate));
  if (found === undefined) {
    throw new Error(
      promptFile === null
        ? `cannot find the shipped judge prompt (looked in ${candidates.join(', ')}); set judge.prompt_file to a template file`
        : `judge.prompt_file ${candidates[0]} does not exist; point it at a template with {question}, {gold} and {prediction}`,
    );
  }
  return parsePromptTemplate(readFileSync(found, 'utf8'), found);
}

export function fillPrompt(template: PromptTemplate, fields: PromptFields): string {
  return template.text.replace(/\{(question|gold|prediction)\}/gu, (_, name: keyof PromptFields) => fields[name]);
}
