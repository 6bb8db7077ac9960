/**
 * Reads a small JSON file that another process rewrites atomically (run.json, launch.json):
 * the object, or null when the file is missing, unreadable or not a JSON object.
 *
 * Editor-free.
 */
import { readFile } from 'node:fs/promises';

export async function readJsonObject(path: string): Promise<Record<string, unknown> | null> {
  try {
    const parsed: unknown = JSON.parse(await readFile(path, 'utf8'));
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
