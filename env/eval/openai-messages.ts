/**
 * Episode messages (docs/CONTRACTS.md) in the OpenAI chat-completions format, and a chat
 * completion's reply back to the plain text an episode parses.
 *
 * - Images become `image_url` parts holding `data:image/png;base64,...` URLs: a remote server
 *   cannot read the run's image files.
 * - A `tool` observation is sent as a `user` turn with its text and image by default. Many
 *   servers reject images inside `tool` messages, and `tool` messages would need a structured
 *   `tool_call_id`, which a text-format call (hermes, ReFocus) does not have. The episode already
 *   wrote the observation as words ("OBSERVATION: ...", "ERROR [E4]: ..."), so nothing is lost.
 *   `observationRole: 'tool'` keeps the `tool` role (content parts, no tool_call_id) for servers
 *   that accept it and models trained on it: a trainer checkpoint behind serve-policy.
 * - System and assistant turns are plain strings (some servers refuse part lists there).
 *
 * Never runs or rewrites what the model said: the reply text goes to the episode unchanged.
 */
import { readFileSync } from 'node:fs';
import type { ChatMessage, ImagePart } from '../episodes/messages.js';

export type OpenAIContentPart = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } };

export type OpenAIMessage =
  | { role: 'system' | 'assistant'; content: string }
  | { role: 'user' | 'tool'; content: string | OpenAIContentPart[] };

export interface OpenAIMessageOptions {
  /** The role a tool observation is sent with (default 'user'; see above). */
  observationRole?: 'user' | 'tool';
}

function imageUrl(part: ImagePart): string {
  if (part.data !== undefined) return `data:image/png;base64,${part.data}`;
  if (part.path !== undefined) return `data:image/png;base64,${readFileSync(part.path).toString('base64')}`;
  throw new Error(`image ${part.ref} has neither inline data nor a path; start the episode with inlineImages`);
}

function textOnly(message: ChatMessage): string {
  return message.content.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('\n');
}

export function toOpenAIMessages(messages: readonly ChatMessage[], options: OpenAIMessageOptions = {}): OpenAIMessage[] {
  return messages.map((message): OpenAIMessage => {
    if (message.role === 'system' || message.role === 'assistant') return { role: message.role, content: textOnly(message) };
    const parts: OpenAIContentPart[] = message.content.map((p) => (p.type === 'text' ? { type: 'text', text: p.text } : { type: 'image_url', image_url: { url: imageUrl(p) } }));
    return { role: message.role === 'tool' ? (options.observationRole ?? 'user') : 'user', content: parts };
  });
}

/**
 * The text of a chat completion's first choice. Servers that parse tool calls themselves (vLLM
 * with a tool parser) return `tool_calls` instead of text: each is written back as a hermes
 * `<tool_call>` block, so the episode's parser sees what the model said. Returns null when the
 * body is not a chat completion at all.
 */
export function replyText(body: unknown): string | null {
  if (typeof body !== 'object' || body === null) return null;
  const choices = (body as { choices?: unknown }).choices;
  if (!Array.isArray(choices) || choices.length === 0) return null;
  const message = (choices[0] as { message?: unknown } | null)?.message;
  if (typeof message !== 'object' || message === null) return null;
  const { content, tool_calls: toolCalls } = message as { content?: unknown; tool_calls?: unknown };
  let text: string;
  if (typeof content === 'string') text = content;
  else if (content === null || content === undefined) text = '';
  else if (Array.isArray(content)) text = content.map((p: unknown) => (typeof p === 'object' && p !== null && typeof (p as { text?: unknown }).text === 'string' ? (p as { text: string }).text : '')).join('');
  else return null;
  if (Array.isArray(toolCalls)) {
    for (const call of toolCalls) {
      const fn = (call as { function?: { name?: unknown; arguments?: unknown } } | null)?.function;
      if (!fn || typeof fn.name !== 'string') continue;
      const args = typeof fn.arguments === 'string' ? fn.arguments : JSON.stringify(fn.arguments ?? {});
      // Arguments arrive as a JSON string; they are inserted as written, not parsed, so a
      // malformed argument string reaches the episode's parser and becomes an E1 it can report.
      text += `${text === '' ? '' : '\n'}<tool_call>{"name": ${JSON.stringify(fn.name)}, "arguments": ${args}}</tool_call>`;
    }
  }
  return text;
}
