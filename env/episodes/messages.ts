/**
 * Chat messages as an episode sends them to a policy (docs/CONTRACTS.md): content parts,
 * images by content hash, with a path and/or inline data depending on what the client asked.
 */

export interface TextPart {
  type: 'text';
  text: string;
}

export interface ImagePart {
  type: 'image';
  /** SHA-256 of the PNG bytes; the file is `<images dir>/<ref>.png`. */
  ref: string;
  width: number;
  height: number;
  path?: string;
  /** Base64 PNG, only when the client asked for inline images. */
  data?: string;
}

export type ContentPart = TextPart | ImagePart;

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  /** For tool messages: the tool whose result this is. */
  name?: string;
  content: ContentPart[];
}

export interface Observation {
  /** The messages this start or step added, as the policy reads them. */
  messages: ChatMessage[];
  /** The whole conversation as the policy reads it before its next turn; absent once the episode is done. */
  prompt?: ChatMessage[];
}

export function textOf(message: ChatMessage): string {
  return message.content.filter((p): p is TextPart => p.type === 'text').map((p) => p.text).join('\n');
}
