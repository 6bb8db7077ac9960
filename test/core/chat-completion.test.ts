import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { attemptChatCompletion, retryWait, type ChatWording } from '../../env/core/chat-completion.js';

const wording: ChatWording = {
  timedOut: (ms) => `timed out ${ms}`,
  unreachable: (detail) => `unreachable ${detail}`,
  busy: (status, body) => `busy ${status} ${body}`,
  refused: (status, body, keySent) => `refused ${status} ${body} key=${keySent}`,
  notJson: (body) => `not json ${body}`,
};

/** A real server whose answer per path is scripted; it records the Authorization header it saw. */
async function server(): Promise<{ url: (path: string) => string; auth: (string | undefined)[]; close: () => Promise<void> }> {
  const auth: (string | undefined)[] = [];
  const s: Server = createServer((req, res) => {
    auth.push(req.headers.authorization);
    if (req.url === '/ok') res.writeHead(200, { 'content-type': 'application/json' }).end('{"choices":[{"message":{"content":"yes"}}]}');
    else if (req.url === '/busy') res.writeHead(503, { 'retry-after': '2' }).end('overloaded');
    else if (req.url === '/missing') res.writeHead(404).end('no such model');
    else if (req.url === '/garbage') res.writeHead(200).end('<html>');
    else if (req.url === '/hang') setTimeout(() => res.end('late'), 2000);
  });
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as AddressInfo;
  return { url: (path) => `http://127.0.0.1:${port}${path}`, auth, close: () => new Promise((resolve) => s.close(() => resolve())) };
}

test('one attempt is a reply, a retry (with the server’s Retry-After) or a failure, in the caller’s words', async (t) => {
  const http = await server();
  t.after(() => http.close());
  const attempt = (path: string, apiKey?: string, timeoutMs = 5000) => attemptChatCompletion({ endpoint: http.url(path), body: { model: 'm' }, apiKey, timeoutMs, wording });
  const ok = await attempt('/ok', 'secret');
  assert.equal(ok.kind, 'reply');
  assert.deepEqual(ok.kind === 'reply' ? ok.body : null, { choices: [{ message: { content: 'yes' } }] });
  assert.equal(http.auth.at(-1), 'Bearer secret');
  assert.deepEqual(await attempt('/busy'), { kind: 'retry', reason: 'busy 503 overloaded', retryAfterMs: 2000, answered: true });
  assert.equal(http.auth.at(-1), undefined, 'no key, no header');
  assert.deepEqual(await attempt('/missing', 'k'), { kind: 'fail', reason: 'refused 404 no such model key=true', answered: true });
  assert.deepEqual(await attempt('/garbage'), { kind: 'fail', reason: 'not json <html>', answered: true });
  assert.deepEqual(await attempt('/hang', undefined, 100.4), { kind: 'retry', reason: 'timed out 100.4', retryAfterMs: null, answered: true });
  // A port nobody listens on any more: the connection is refused.
  const gone = createServer();
  await new Promise<void>((resolve) => gone.listen(0, '127.0.0.1', resolve));
  const gonePort = (gone.address() as AddressInfo).port;
  await new Promise<void>((resolve) => gone.close(() => resolve()));
  const refused = await attemptChatCompletion({ endpoint: `http://127.0.0.1:${gonePort}/v1`, body: {}, apiKey: undefined, timeoutMs: 2000, wording });
  assert.equal(refused.kind, 'retry');
  assert.match(refused.kind === 'retry' ? refused.reason : '', /^unreachable ECONNREFUSED/);
  assert.equal(refused.kind === 'retry' && refused.answered, false);
  // The caller's own abort propagates instead of reading as a server failure.
  const controller = new AbortController();
  const pending = attemptChatCompletion({ endpoint: http.url('/hang'), body: {}, apiKey: undefined, timeoutMs: 5000, wording, signal: controller.signal });
  controller.abort();
  await assert.rejects(pending, { name: 'AbortError' });
});

test('the wait before a retry: the server’s Retry-After up to the ceiling, else backoff with jitter', () => {
  const policy = { initialMs: 100, maxMs: 1000, retryAfterMaxMs: 5000 };
  assert.deepEqual(retryWait(1, 2000, policy), { delayMs: 2000 });
  assert.deepEqual(retryWait(1, 6000, policy), { tooLong: 6000 });
  // Equal jitter: half the ceiling fixed, half random; the ceiling doubles per retry up to maxMs.
  assert.deepEqual(retryWait(1, null, policy, () => 0), { delayMs: 50 });
  assert.deepEqual(retryWait(3, null, policy, () => 0.999999), { delayMs: 400 });
  assert.deepEqual(retryWait(9, null, policy, () => 0), { delayMs: 500 });
});
