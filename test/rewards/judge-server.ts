/**
 * A small OpenAI-compatible chat-completions server for the judge tests (node:http on
 * 127.0.0.1, port 0) — the one stand-in the judge tests use. By default it is an honest judge:
 * it reads the reference and the student's answer out of the prompt and says <|YES|> when they
 * are equal ignoring case. A test can script any reply, status, header or delay per request, and
 * the server counts requests in flight.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  path: string;
  headers: IncomingHttpHeaders;
  body: { model?: string; messages?: { role: string; content: string }[]; temperature?: number; max_tokens?: number };
  prompt: string;
}

export interface Behaviour {
  status?: number;
  headers?: Record<string, string>;
  /** The judge's message content (wrapped in a chat-completions body). */
  reply?: string;
  /** A raw body instead of a chat-completions one. */
  rawBody?: string;
  delayMs?: number;
}

/** Decides the response to the n-th request (from 0). Return undefined for the honest judge. */
export type Script = (n: number, request: ReceivedRequest) => Behaviour | undefined;

export interface FakeJudge {
  /** Base URL including /v1. */
  url: string;
  requests: ReceivedRequest[];
  /** Most requests ever in flight at once. */
  maxInFlight: () => number;
  script: Script;
  close: () => Promise<void>;
}

function honestReply(prompt: string): string {
  const gold = /Reference answer: (.*)/u.exec(prompt)?.[1]?.trim().toLowerCase();
  const prediction = /Student's answer: (.*)/u.exec(prompt)?.[1]?.trim().toLowerCase();
  return gold !== undefined && gold === prediction ? '<|YES|>' : '<|NO|>';
}

function completion(content: string): string {
  return JSON.stringify({
    id: 'chatcmpl-test',
    object: 'chat.completion',
    model: 'judge',
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 10, completion_tokens: 1, total_tokens: 11 },
  });
}

export async function startFakeJudge(script: Script = () => undefined): Promise<FakeJudge> {
  let inFlight = 0;
  let maxInFlight = 0;
  const judge: FakeJudge = { url: '', requests: [], maxInFlight: () => maxInFlight, script, close: async () => {} };
  const server: Server = createServer((req, res) => {
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    let finished = false;
    const done = (): void => {
      if (!finished) {
        finished = true;
        inFlight--;
      }
    };
    res.on('close', done);
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as ReceivedRequest['body'];
      const request: ReceivedRequest = { path: req.url ?? '', headers: req.headers, body, prompt: body.messages?.[0]?.content ?? '' };
      const n = judge.requests.length;
      judge.requests.push(request);
      const behaviour = judge.script(n, request) ?? {};
      const respond = (): void => {
        if (res.destroyed) return;
        if (request.path !== '/v1/chat/completions') {
          res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: `no route ${request.path}` } }));
          return;
        }
        const text = behaviour.rawBody ?? completion(behaviour.reply ?? honestReply(request.prompt));
        res.writeHead(behaviour.status ?? 200, { 'content-type': 'application/json', ...behaviour.headers }).end(text);
      };
      if (behaviour.delayMs) {
        const timer = setTimeout(respond, behaviour.delayMs);
        res.on('close', () => clearTimeout(timer));
      } else {
        respond();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  judge.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  judge.close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return judge;
}
