/**
 * An OpenAI-compatible chat-completions server for the eval tests (node:http on 127.0.0.1,
 * port 0) that answers from a script — the one stand-in for a hosted model. The script sees
 * each request (decoded: the task's question, which arm, which turn, the images sent) and
 * returns a reply text, a status with headers, a raw body, a delay, or a hang (no answer until
 * the client gives up). Every request is recorded for the assertions.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SeenRequest {
  /** Order of arrival, from 0. */
  index: number;
  headers: IncomingHttpHeaders;
  body: { model: string; messages: { role: string; content: unknown }[]; temperature?: number; max_tokens?: number };
  /** The question of the episode (from its "Question: ..." turn). */
  question: string;
  /** True when the system prompt offers tools. */
  tools: boolean;
  /** Assistant messages already in the conversation: 0 for the first turn. */
  turn: number;
  /** data: URLs of every image in the conversation, in order. */
  images: string[];
}

export type ScriptReply =
  | { text: string; delayMs?: number }
  | { toolCalls: { name: string; arguments: string }[]; delayMs?: number }
  | { status: number; body?: string; headers?: Record<string, string>; delayMs?: number }
  | { rawBody: string }
  | { hang: true };

export type ChatScript = (request: SeenRequest) => ScriptReply;

export interface ScriptedChatServer {
  /** Base URL including /v1. */
  url: string;
  requests: SeenRequest[];
  close(): Promise<void>;
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((p: { type?: string; text?: string }) => (p.type === 'text' ? (p.text ?? '') : '')).join('\n');
}

function imagesOf(content: unknown): string[] {
  if (!Array.isArray(content)) return [];
  return content.flatMap((p: { type?: string; image_url?: { url?: string } }) => (p.type === 'image_url' && typeof p.image_url?.url === 'string' ? [p.image_url.url] : []));
}

function completion(message: Record<string, unknown>): string {
  return JSON.stringify({
    id: 'chatcmpl-test',
    object: 'chat.completion',
    model: 'scripted',
    choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 },
  });
}

export async function startScriptedChatServer(script: ChatScript): Promise<ScriptedChatServer> {
  const requests: SeenRequest[] = [];
  const hanging = new Set<ServerResponse>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        res.writeHead(404).end('not found');
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as SeenRequest['body'];
      const messages = body.messages;
      const question = messages.map((m) => textOf(m.content)).find((t) => t.startsWith('Question: ') || t.includes('\nQuestion: '))?.replace(/^[\s\S]*?Question: /u, '') ?? '';
      const seen: SeenRequest = {
        index: requests.length,
        headers: req.headers,
        body,
        question,
        tools: /edit the image with tools/u.test(textOf(messages[0]?.content)),
        turn: messages.filter((m) => m.role === 'assistant').length,
        images: messages.flatMap((m) => imagesOf(m.content)),
      };
      requests.push(seen);
      const reply = script(seen);
      const send = () => {
        if ('hang' in reply) {
          hanging.add(res);
          res.on('close', () => hanging.delete(res));
          return;
        }
        if ('rawBody' in reply) {
          res.writeHead(200, { 'content-type': 'application/json' }).end(reply.rawBody);
        } else if ('status' in reply) {
          res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers }).end(reply.body ?? JSON.stringify({ error: { message: `scripted ${reply.status}` } }));
        } else if ('toolCalls' in reply) {
          res.writeHead(200, { 'content-type': 'application/json' }).end(
            completion({ content: null, tool_calls: reply.toolCalls.map((c, i) => ({ id: `call_${i}`, type: 'function', function: c })) }),
          );
        } else {
          res.writeHead(200, { 'content-type': 'application/json' }).end(completion({ content: reply.text }));
        }
      };
      const delay = 'delayMs' in reply ? (reply.delayMs ?? 0) : 0;
      if (delay > 0) setTimeout(send, delay);
      else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
