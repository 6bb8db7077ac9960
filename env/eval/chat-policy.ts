/**
 * A policy the eval can talk to turn by turn: given the conversation so far (episode messages
 * plus the policy's own earlier replies), it returns the next assistant message as text.
 * `OpenAIChatPolicy` is the one for OpenAI-compatible servers; tests and other backends can
 * implement the same two lines.
 */
import type { ChatMessage } from '../episodes/messages.js';
import { ChatClient, type ChatClientOptions, type ChatUsage } from './chat-client.js';
import { toOpenAIMessages, type OpenAIMessageOptions } from './openai-messages.js';

export interface ChatPolicy {
  reply(conversation: readonly ChatMessage[], usage: ChatUsage, signal?: AbortSignal): Promise<string>;
}

export class OpenAIChatPolicy implements ChatPolicy {
  readonly client: ChatClient;

  private readonly messageOptions: OpenAIMessageOptions;

  constructor(options: ChatClientOptions, messageOptions: OpenAIMessageOptions = {}) {
    this.client = new ChatClient(options);
    this.messageOptions = messageOptions;
  }

  reply(conversation: readonly ChatMessage[], usage: ChatUsage, signal?: AbortSignal): Promise<string> {
    return this.client.complete(toOpenAIMessages(conversation, this.messageOptions), usage, signal);
  }
}
