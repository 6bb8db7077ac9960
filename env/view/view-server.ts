/**
 * `vistool view`'s HTTP server: serves the panel bundles and pages, the run directories' files
 * (read-only), the panel protocol (POST /api/ipc) and the host's notifications (GET /api/events,
 * Server-Sent Events) to a browser on this machine.
 *
 * Every request is checked: the Host header must name this loopback server (no DNS rebinding),
 * and the token must come as `?token=`, `Authorization: Bearer`, or the cookie set when a page
 * was opened with the token. Files are resolved inside their root and served with types that
 * never execute (HTML and SVG from a run are sent as downloads). Bundles: symlinks out are
 * refused. Run files: `..` and links out are refused, except images under a folder of the run
 * that is itself a link to a directory (a shared images/ folder; run-files.ts has the rule).
 * Every response carries a strict Content-Security-Policy. It writes nothing itself; the one file a
 * panel can change in a run is annotations.jsonl, through the backend (env/runs/annotations.ts).
 */
import { timingSafeEqual } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, extname } from 'node:path';
import { PathError, resolveInsideRoot } from '../core/paths.js';
import { PANEL_KINDS, type PanelKind } from '../../protocol/panel-protocol.js';
import { resolveRunFile } from '../runs/run-files.js';
import { HttpError, readJsonBody } from '../server/http-util.js';
import { contentSecurityPolicy, indexPage, newNonce, panelPage, type Theme } from './page.js';
import type { PanelBackend } from './panel-backend.js';

export interface ViewServerOptions {
  backend: PanelBackend;
  /** Folder holding the built bundles (dist/webview). */
  assetsDir: string;
  token: string;
  host?: string;
  port?: number;
  /** Largest request body (playground uploads are base64 images), default 40 MB. */
  maxBodyBytes?: number;
  log?: (level: 'info' | 'warn' | 'error', message: string) => void;
}

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.ttf': 'font/ttf',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.json': 'application/json; charset=utf-8',
  '.jsonl': 'text/plain; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.log': 'text/plain; charset=utf-8',
  '.csv': 'text/plain; charset=utf-8',
};

/** A report page's policy: no script at all, images from this server, the report's own inline <style>. */
const REPORT_POLICY = "default-src 'none'; script-src 'none'; img-src 'self'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
const REPORT_IMAGES = new Set(['.png', '.jpg', '.jpeg']);

/** Types a run directory may serve inline; anything else (HTML, SVG, ...) is a download. */
const RUN_INLINE = new Set(['.png', '.jpg', '.jpeg', '.json', '.jsonl', '.txt', '.log', '.csv']);

export class ViewServer {
  private server: Server | null = null;
  private readonly events = new Set<ServerResponse>();
  private port = 0;
  private readonly log: NonNullable<ViewServerOptions['log']>;
  private unsubscribe: (() => void) | null = null;

  constructor(private readonly options: ViewServerOptions) {
    this.log = options.log ?? (() => {});
  }

  /** Starts listening; returns the base URL (without the token). */
  async start(): Promise<string> {
    const host = this.options.host ?? '127.0.0.1';
    this.server = createServer((req, res) => {
      this.route(req, res).catch((err: unknown) => this.fail(res, err));
    });
    await new Promise<void>((resolvePromise, reject) => {
      this.server!.once('error', reject);
      this.server!.listen(this.options.port ?? 0, host, () => resolvePromise());
    });
    this.port = (this.server.address() as AddressInfo).port;
    this.unsubscribe = this.options.backend.onNotification((message) => {
      const frame = `data: ${JSON.stringify(message)}\n\n`;
      for (const res of this.events) res.write(frame);
    });
    return `http://${host.includes(':') ? `[${host}]` : host}:${this.port}`;
  }

  async stop(): Promise<void> {
    this.unsubscribe?.();
    for (const res of this.events) res.end();
    this.events.clear();
    const server = this.server;
    this.server = null;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolvePromise) => server.close(() => resolvePromise()));
  }

  private get cookieName(): string {
    return `vistool_view_${this.port}`;
  }

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!this.hostAllowed(req.headers.host)) throw new HttpError(403, `Host '${req.headers.host ?? ''}' is not this server; open the URL vistool view printed (127.0.0.1 or localhost)`);
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname === '/favicon.ico') {
      // Browsers ask for it unprompted; answering keeps their consoles free of noise.
      this.securityHeaders(res, null);
      res.writeHead(204);
      res.end();
      return;
    }
    const queryToken = url.searchParams.get('token');
    if (!this.authorized(req, queryToken)) throw new HttpError(401, 'missing or wrong token: open the URL printed by `vistool view` (it ends in ?token=...)');
    const theme: Theme = url.searchParams.get('theme') === 'dark' ? 'dark' : 'light';
    const path = url.pathname;
    const method = req.method ?? 'GET';
    if (queryToken !== null) res.setHeader('set-cookie', `${this.cookieName}=${this.options.token}; HttpOnly; SameSite=Strict; Path=/`);

    if (method === 'GET' && path === '/') return this.sendPage(res, indexPage(this.options.backend.summaries(), theme), null);
    const panel = path.slice(1) as PanelKind;
    if (method === 'GET' && PANEL_KINDS.includes(panel)) {
      const nonce = newNonce();
      return this.sendPage(res, panelPage({ panel, nonce, config: { panel, transport: 'browser', token: this.options.token }, assetUrl: (name) => `static/${name}`, theme }), nonce);
    }
    if (method === 'GET' && path.startsWith('/static/')) return this.sendFile(res, this.options.assetsDir, decodeURIComponent(path.slice('/static/'.length)), false);
    if (method === 'GET' && path.startsWith('/files/')) {
      const [runId = '', ...rest] = path.slice('/files/'.length).split('/');
      const run = this.options.backend.runs.find((r) => r.id === decodeURIComponent(runId));
      if (!run) throw new HttpError(404, `no run '${decodeURIComponent(runId)}' is open`);
      return this.sendFile(res, run.dir, rest.map(decodeURIComponent).join('/'), true);
    }
    if (method === 'GET' && path.startsWith('/report/')) return this.sendReport(res, path.slice('/report/'.length));
    if (method === 'POST' && path === '/api/ipc') return this.ipc(req, res);
    if (method === 'GET' && path === '/api/events') return this.openEvents(req, res);
    throw new HttpError(404, `no route for ${method} ${path}; panels are /dashboard, /viewer and /playground`);
  }

  private hostAllowed(header: string | undefined): boolean {
    if (!header) return false;
    return [`127.0.0.1:${this.port}`, `localhost:${this.port}`, `[::1]:${this.port}`].includes(header.toLowerCase());
  }

  private authorized(req: IncomingMessage, queryToken: string | null): boolean {
    const candidates: string[] = [];
    if (queryToken !== null) candidates.push(queryToken);
    const auth = req.headers.authorization;
    if (typeof auth === 'string' && auth.startsWith('Bearer ')) candidates.push(auth.slice(7).trim());
    for (const part of (req.headers.cookie ?? '').split(';')) {
      const [name, ...value] = part.trim().split('=');
      if (name === this.cookieName) candidates.push(value.join('='));
    }
    const expected = Buffer.from(this.options.token);
    return candidates.some((c) => {
      const given = Buffer.from(c);
      return given.length === expected.length && timingSafeEqual(given, expected);
    });
  }

  private securityHeaders(res: ServerResponse, nonce: string | null): void {
    res.setHeader('content-security-policy', contentSecurityPolicy(nonce));
    res.setHeader('x-content-type-options', 'nosniff');
    res.setHeader('referrer-policy', 'no-referrer');
    res.setHeader('x-frame-options', 'DENY');
    res.setHeader('cross-origin-opener-policy', 'same-origin');
    res.setHeader('cross-origin-resource-policy', 'same-origin');
    res.setHeader('cache-control', 'no-store');
  }

  private sendPage(res: ServerResponse, html: string, nonce: string | null): void {
    this.securityHeaders(res, nonce);
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': Buffer.byteLength(html) });
    res.end(html);
  }

  private async sendFile(res: ServerResponse, root: string, relative: string, fromRun: boolean): Promise<void> {
    let real: string;
    try {
      real = fromRun ? await resolveRunFile(root, relative) : await resolveInsideRoot(root, root, relative);
    } catch (err) {
      if (err instanceof PathError) throw new HttpError(/outside/.test(err.message) ? 403 : 404, err.message);
      throw err;
    }
    let body: Buffer;
    try {
      body = await readFile(real);
    } catch {
      throw new HttpError(404, `'${relative}' is not a readable file`);
    }
    const ext = extname(real).toLowerCase();
    const inline = !fromRun || RUN_INLINE.has(ext);
    this.securityHeaders(res, null);
    res.writeHead(200, {
      'content-type': inline ? (TYPES[ext] ?? 'application/octet-stream') : 'application/octet-stream',
      'content-length': body.length,
      ...(inline ? {} : { 'content-disposition': 'attachment' }),
    });
    res.end(body);
  }

  /**
   * `/report/<run>/`: the report.html the run is read with (RunSummary.report), under a policy
   * that runs no script and loads only this server's images and the page's inline style;
   * `/report/<run>/<path>`: an image the report links, inside the report's folder (no `..`, no
   * link out). Nothing else of that folder is served.
   */
  private async sendReport(res: ServerResponse, rest: string): Promise<void> {
    const [runId = '', ...parts] = rest.split('/');
    const run = this.options.backend.runs.find((r) => r.id === decodeURIComponent(runId));
    if (!run) throw new HttpError(404, `no run '${decodeURIComponent(runId)}' is open`);
    const report = run.reportFile;
    if (report === null) throw new HttpError(404, `run '${run.id}' has no report.html (neither in ${run.dir} nor in its folder of runs)`);
    const relative = parts.map(decodeURIComponent).join('/');
    if (relative === '' || relative === 'report.html') {
      const html = await readFile(report, 'utf8');
      this.securityHeaders(res, null);
      res.setHeader('content-security-policy', REPORT_POLICY);
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': Buffer.byteLength(html) });
      res.end(html);
      return;
    }
    if (!REPORT_IMAGES.has(extname(relative).toLowerCase())) throw new HttpError(403, `a report serves only its page and its images (.png, .jpg), not '${relative}'`);
    return this.sendFile(res, dirname(report), relative, false);
  }

  private async ipc(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!(req.headers['content-type'] ?? '').startsWith('application/json')) throw new HttpError(415, 'POST /api/ipc takes application/json');
    const message = await readJsonBody(req, this.options.maxBodyBytes ?? 40 << 20);
    // A page that closes the request (a search it dropped, a tab closed) no longer wants the answer: the backend stops working on it.
    const closed = new AbortController();
    res.on('close', () => {
      if (!res.writableEnded) closed.abort();
    });
    let reply;
    try {
      reply = await this.options.backend.handle(message, closed.signal);
    } catch (err) {
      throw new HttpError(400, (err as Error).message);
    }
    if (closed.signal.aborted) return;
    this.securityHeaders(res, null);
    if (reply === null) {
      res.writeHead(204);
      res.end();
      return;
    }
    const payload = JSON.stringify(reply);
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(payload) });
    res.end(payload);
  }

  private openEvents(req: IncomingMessage, res: ServerResponse): void {
    this.securityHeaders(res, null);
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', connection: 'keep-alive' });
    res.write(`retry: 1000\n\ndata: ${JSON.stringify(this.options.backend.runsSnapshot())}\n\n`);
    this.events.add(res);
    const heartbeat = setInterval(() => res.write(': keep-alive\n\n'), 15_000);
    heartbeat.unref();
    req.on('close', () => {
      clearInterval(heartbeat);
      this.events.delete(res);
    });
  }

  private fail(res: ServerResponse, err: unknown): void {
    const status = err instanceof HttpError ? err.status : 500;
    const message = err instanceof Error ? err.message : String(err);
    if (status >= 500) this.log('error', message);
    if (res.headersSent) {
      res.end();
      return;
    }
    this.securityHeaders(res, null);
    const payload = JSON.stringify({ error: { status, message } });
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(payload) });
    res.end(payload);
  }
}
