/**
 * How the tools are shown to a model: OpenAI function objects (for chat templates and APIs that
 * take `tools=[...]`) and a plain-text block for prompts. Both are built from the same
 * definitions, so what the model reads always matches what the registry validates.
 * Nothing here knows the call syntax (hermes tags, JSON actions, ...): the episode adds that.
 */
import type { PixelMetadata } from './metadata.js';
import { inlineJson } from './outcome.js';
import type { ToolDefinition } from './types.js';

export interface OpenAIFunctionTool {
  type: 'function';
  function: { name: string; description: string; parameters: ToolDefinition['parameters'] };
}

export function asOpenAIFunction(tool: ToolDefinition): OpenAIFunctionTool {
  // A copy: callers (servers, templates) may decorate the schema; ours must stay as validated.
  return { type: 'function', function: { name: tool.name, description: tool.description, parameters: structuredClone(tool.parameters) } };
}

/**
 * One section per tool: name, description, arguments (required or optional, with what each is),
 * and an example call. Given metadata, the examples use that image's own labels.
 */
export function promptBlock(tools: readonly ToolDefinition[], meta?: PixelMetadata): string {
  const sections = tools.map((tool) => {
    const args = Object.entries(tool.parameters.properties).map(([name, schema]) => {
      const required = tool.parameters.required.includes(name) ? 'required' : 'optional';
      const description = (schema as { description?: string }).description ?? '';
      return `- ${name} (${required}): ${description}`;
    });
    const example = inlineJson({ name: tool.name, arguments: tool.exampleArguments?.(meta) ?? {} }, 400);
    return [`### ${tool.name}`, tool.description, 'Arguments:', ...args, `Example: ${example}`].join('\n');
  });
  return ['## Image tools', 'Each tool edits the current image and shows you the result. Arguments are JSON; write labels exactly as they appear in the image.', '', sections.join('\n\n')].join('\n');
}
