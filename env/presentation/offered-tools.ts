/**
 * Which tools an episode offers its policy: listed in the system turn, described by the env's
 * `tools` answer, and the only ones its calls may use. Today that is every tool whose bands the
 * image has (tools/registry.ts). This is the one place to narrow the list per task (a task kind
 * that should see only some tools): the system turn, the examples and the refusals all follow it.
 */
import type { TaskRecord } from '../tasks/record.js';
import type { PixelMetadata } from '../tools/metadata.js';
import { availableToolNames } from '../tools/registry.js';

export function offeredToolNames(_task: TaskRecord, meta: PixelMetadata, tools: boolean): string[] {
  return tools ? availableToolNames(meta) : [];
}
