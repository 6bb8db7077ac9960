/**
 * Which tools an episode offers its policy: listed in the system turn, described by the env's
 * `tools` answer, and the only ones its calls may use. The task's kind decides the family (a
 * geometry diagram gets the named-point drawing tools, a chart or table every tool whose bands the
 * image has: tools/registry.ts `toolNamesForTask`); the system turn, the examples and the refusals
 * all follow this list.
 */
import type { TaskRecord } from '../tasks/record.js';
import type { PixelMetadata } from '../tools/metadata.js';
import { toolNamesForTask } from '../tools/registry.js';

export function offeredToolNames(task: TaskRecord, meta: PixelMetadata, tools: boolean): string[] {
  return tools ? toolNamesForTask(task.kind, meta) : [];
}
