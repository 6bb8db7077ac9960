/**
 * Final-answer values: how a written answer becomes a string or a list. Lists are written with
 * `||` between items (ReFocus); ReFocus's ground truth uses `|||`, so any run of two or more
 * bars separates items.
 */
import { contains } from './text-regions.js';

export function splitAnswer(raw: string): string | string[] {
  const text = raw.trim();
  if (!contains(text, '||')) return text;
  const parts = text
    .split(/\|{2,}/)
    .map((part) => part.trim())
    .filter((part) => part.length > 0);
  if (parts.length === 0) return '';
  if (parts.length === 1) return parts[0] ?? '';
  return parts;
}

/** An answer given as a value (Terminate's `ans`, a JSON field): strings split, lists kept. */
export function answerFromValue(value: unknown): string | string[] | null {
  if (typeof value === 'string') return splitAnswer(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return value.map((item) => (typeof item === 'string' ? item.trim() : JSON.stringify(item)));
  return null;
}
