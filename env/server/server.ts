/**
 * The environment server: the seam between the TypeScript engine and any trainer. HTTP/JSON on
 * loopback, every request authenticated with a bearer token, every image path checked against
 * an allowed root. Endpoints and shapes: docs/CONTRACTS.md and env/server/openapi.json.
 *
 * It never runs model output: messages go through the action parser, calls through the tool
 * registry's validation.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { stat } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { decodeImage, ImageTooLargeError, type RgbImage } from '../core/image.js';
import { PathError, resolveInsideRoots } from '../core/paths.js';
import { DEFAULT_LIMITS, Episode, EpisodeError, type Action, type EpisodeLimits } from '../episodes/episode.js';
import { ImageStore } from '../episodes/image-store.js';
import type { Trajectory } from '../episodes/trajectory.js';
import { resolveMetadata, type PixelMetadata } from '../tools/metadata.js';
import { toolsAsOpenAIFunctions, toolsPromptBlock, listTools } from '../tools/registry.js';
import { metadataOrGrounding } from '../grounding/fallback.js';
import { goldTranscript } from '../tasks/gold.js';
import { whyNoGrounding } from '../tasks/grounding-need.js';
import { questionText } from '../episodes/prompt.js';
import { parsePresentation, PresentationError, type Presentation } from '../presentation/presentation.js';
import { presentationTexts } from '../presentation/texts.js';
import { pixelBoundsProblem, type PixelBounds } from '../config/qwen-image-tokens.js';
import type { TaskRecord } from '../tasks/record.js';
import { HttpError, hasToken, isObject, readJsonBody, sendJson } from './http-util.js';
import { IdleCollector } from './idle-collector.js';
import { ParserPool } from './parser-pool.js';
import { parseTaskRecord } from './task-input.js';

export interface ScoreResult {
  reward: number;
  components: Record<string, number>;
  weights: Record<string, number>;
  correct: boolean;
  [extra: string]: unknown;
}

/** Scores a finished (or abandoned) trajectory against its task. */
export type Scorer = (trajectory: Trajectory, task: TaskRecord) => Promise<ScoreResult>;

export interface EnvServerOptions {
  host?: string;
  port?: number;
  token: string;
  /** Task images must lie inside this folder (after following symlinks); the default task_dir. */
  root: string;
  /** More folders task images may lie in (each checked on its own, like `root`). */
  moreRoots?: readonly string[];
  /** Where episode images are written, content-addressed. */
  imagesDir: string;
  scorer: Scorer;
  maxBodyBytes?: number;
  maxEpisodes?: number;
  maxBatchItems?: number;
  idleTimeoutMs?: number;
  limits?: Partial<EpisodeLimits>;
  version?: string;
  log?: (entry: Record<string, unknown>) => void;
}

interface LiveEpisode {
  episode: Episode;
  /** Steps and scores of one episode run one after another, never interleaved. */
  queue: Promise<unknown>;
  score?: ScoreResult;
}

interface LoadedImage {
  image: RgbImage;
  meta: PixelMetadata;
  mtimeMs: number;
}

const IMAGE_CACHE_SIZE = 256;

export class EnvServer {
  private readonly server: Server;
  private readonly episodes = new Map<string, LiveEpisode>();
  private readonly store: ImageStore;
  private readonly imageCache = new Map<string, LoadedImage>();
  /** Long model messages are parsed on worker threads, so one request cannot stall the rest. */
  private readonly parser = new ParserPool();
  /** An idle server gives a burst's garbage back (see idle-collector.ts). */
  private readonly idleCollector = new IdleCollector(() => this.episodes.size === 0 && this.inFlight === 0);
  private inFlight = 0;
  private sweeper: NodeJS.Timeout | undefined;
  private stopping = false;
  private readonly opts: Required<Omit<EnvServerOptions, 'limits'>> & { limits: Partial<EpisodeLimits> };

  constructor(options: EnvServerOptions) {
    this.opts = {
      host: '127.0.0.1',
      port: 0,
      maxBodyBytes: 8 * 1024 * 1024,
      maxEpisodes: 4096,
      maxBatchItems: 1024,
      idleTimeoutMs: 10 * 60 * 1000,
      limits: {},
      moreRoots: [],
      version: '0.0.0',
      log: (entry) => process.stderr.write(JSON.stringify(entry) + '\n'),
      ...options,
    };
    this.store = new ImageStore(this.opts.imagesDir);
    this.server = createServer((req, res) => void this.handle(req, res));
    this.server.requestTimeout = 120_000;
    this.server.headersTimeout = 30_000;
  }

  async start(): Promise<string> {
    await new Promise<void>((resolvePromise, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.opts.port, this.opts.host, () => {
        this.server.off('error', reject);
        resolvePromise();
      });
    });
    const sweepEvery = Math.max(250, Math.min(30_000, this.opts.idleTimeoutMs / 4));
    this.sweeper = setInterval(() => this.expireIdle(), sweepEvery);
    this.sweeper.unref();
    return this.url;
  }

  get url(): string {
    const address = this.server.address() as AddressInfo;
    const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    return `http://${host}:${address.port}`;
  }

  get inFlightRequests(): number {
    return this.inFlight;
  }

  get liveEpisodes(): number {
    return this.episodes.size;
  }

  /** Stops accepting connections, lets in-flight requests finish (up to `graceMs`), then closes. */
  async stop(graceMs = 10_000): Promise<void> {
    this.stopping = true;
    if (this.sweeper) clearInterval(this.sweeper);
    this.idleCollector.stop();
    const closed = new Promise<void>((resolvePromise) => this.server.close(() => resolvePromise()));
    this.server.closeIdleConnections();
    const deadline = Date.now() + graceMs;
    while (this.inFlight > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    this.server.closeAllConnections();
    await closed;
    await this.parser.close();
  }

  private expireIdle(): void {
    const cutoff = Date.now() - this.opts.idleTimeoutMs;
    for (const [id, live] of this.episodes) {
      if (live.episode.lastActive < cutoff) {
        live.episode.close('expired');
        this.episodes.delete(id);
        this.opts.log({ level: 'info', msg: 'episode expired', episode: id });
      }
    }
    this.idleCollector.maybeIdle();
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = performance.now();
    this.inFlight += 1;
    let status = 500;
    const url = new URL(req.url ?? '/', 'http://localhost');
    try {
      if (!hasToken(req, this.opts.token)) {
        throw new HttpError(401, 'missing or wrong bearer token: send "Authorization: Bearer <token>" with the token from the server\'s --token-file');
      }
      if (this.stopping) throw new HttpError(503, 'server is shutting down');
      const body = req.method === 'POST' ? await readJsonBody(req, this.opts.maxBodyBytes) : undefined;
      const answer = await this.route(req.method ?? 'GET', url.pathname, body);
      status = answer.status;
      sendJson(res, answer.status, answer.body);
    } catch (err) {
      status = err instanceof HttpError ? err.status : 500;
      const message = err instanceof Error ? err.message : String(err);
      if (status === 500) this.opts.log({ level: 'error', msg: 'internal error', path: url.pathname, error: message });
      if (!res.headersSent) sendJson(res, status, { error: { status, message } });
      if (status === 413) req.resume();
    } finally {
      this.inFlight -= 1;
      this.idleCollector.maybeIdle();
      this.opts.log({ level: 'info', msg: 'request', method: req.method, path: url.pathname, status, ms: Math.round((performance.now() - started) * 10) / 10 });
    }
  }

  private async route(method: string, path: string, body: unknown): Promise<{ status: number; body: unknown }> {
    const parts = path.split('/').filter(Boolean);
    if (parts[0] !== 'v1') throw new HttpError(404, `no such endpoint: ${method} ${path} (endpoints start with /v1/)`);
    const [, resource, id, verb] = parts;
    const ok = (b: unknown) => ({ status: 200, body: b });

    if (resource === 'health' && parts.length === 2 && method === 'GET') {
      return ok({ status: 'ok', version: this.opts.version, episodes: this.episodes.size, rss_bytes: process.memoryUsage().rss });
    }
    if (resource === 'tools' && parts.length === 2 && method === 'GET') {
      return ok({ tools: toolsAsOpenAIFunctions(), prompt: toolsPromptBlock(), names: listTools().map((t) => t.name) });
    }
    if (resource === 'presentation' && parts.length === 2 && method === 'POST') {
      const presentation = presentationOption(isObject(body) ? body.presentation : body, 'presentation');
      return ok({ presentation, texts: presentationTexts(presentation) });
    }
    if (resource === 'episodes') {
      if (parts.length === 2 && method === 'POST') return ok(await this.createEpisode(body));
      if (id !== undefined && parts.length === 3 && method === 'GET') return ok(this.live(id).episode.trajectory());
      if (id !== undefined && parts.length === 3 && method === 'DELETE') return ok(this.closeEpisode(id));
      if (id !== undefined && parts.length === 4 && method === 'POST' && verb === 'step') return ok(await this.stepEpisode(id, body));
      if (id !== undefined && parts.length === 4 && method === 'POST' && verb === 'score') return ok(await this.scoreEpisode(id));
    }
    if (resource === 'batch' && parts.length === 3 && method === 'POST') {
      if (id !== 'episodes' && id !== 'step' && id !== 'score' && id !== 'gold') throw new HttpError(404, `no such batch endpoint: /v1/batch/${id} (use episodes, step, score or gold)`);
      const items = this.batchItems(body);
      const run = async (item: unknown): Promise<unknown> => {
        if (id === 'episodes') return this.createEpisode(item);
        if (id === 'gold') return goldTurns(item);
        const episodeId = isObject(item) && typeof item.episode_id === 'string' ? item.episode_id : undefined;
        if (episodeId === undefined) throw new HttpError(400, 'each batch item needs "episode_id": the id returned when the episode was created');
        if (id === 'step') return this.stepEpisode(episodeId, item);
        return this.scoreEpisode(episodeId);
      };
      const results = await Promise.all(
        items.map((item) =>
          run(item).catch((err: unknown) => ({
            error: { status: err instanceof HttpError ? err.status : 500, message: err instanceof Error ? err.message : String(err) },
          })),
        ),
      );
      return ok({ results });
    }
    throw new HttpError(404, `no such endpoint: ${method} ${path}`);
  }

  /** The pixel limit episodes enforce, applied to task images as they are read. */
  private maxPixels(): number {
    return this.opts.limits.maxPixels ?? DEFAULT_LIMITS.maxPixels;
  }

  private batchItems(body: unknown): unknown[] {
    if (!isObject(body) || !Array.isArray(body.items)) throw new HttpError(400, 'a batch body is {"items": [...]}');
    if (body.items.length > this.opts.maxBatchItems) {
      throw new HttpError(413, `batch of ${body.items.length} items is over the limit of ${this.opts.maxBatchItems}; split it`);
    }
    return body.items;
  }

  private live(id: string): LiveEpisode {
    const live = this.episodes.get(id);
    if (!live) throw new HttpError(404, `no episode '${id}': it was closed, expired after ${Math.round(this.opts.idleTimeoutMs / 1000)} s idle, or never existed`);
    return live;
  }

  private async createEpisode(body: unknown): Promise<unknown> {
    if (!isObject(body)) throw new HttpError(400, 'body must be a JSON object: {"task": {...}, "task_dir": "...", "options": {...}}');
    if (this.episodes.size >= this.opts.maxEpisodes) {
      throw new HttpError(429, `too many live episodes (${this.opts.maxEpisodes}); close finished ones with DELETE /v1/episodes/{id}`);
    }
    const task = parseTaskRecord(body.task);
    if (body.options !== undefined && !isObject(body.options)) {
      throw new HttpError(400, `options must be a JSON object such as {"tools": true, "images": "path"}, got ${JSON.stringify(body.options)}`);
    }
    const options = body.options ?? {};
    const taskDir = typeof body.task_dir === 'string' ? body.task_dir : this.opts.root;
    const { image, meta } = await this.loadTaskImage(task, taskDir, typeof body.image_data === 'string' ? body.image_data : undefined);
    const limits: Partial<EpisodeLimits> = { ...this.opts.limits };
    if (options.max_turns !== undefined) limits.maxTurns = positiveInt(options.max_turns, 'options.max_turns');
    if (options.max_tool_calls !== undefined) limits.maxToolCalls = positiveInt(options.max_tool_calls, 'options.max_tool_calls');
    const presentation = presentationOption(options.presentation, 'options.presentation');
    try {
      const { episode, observation } = await Episode.start(task, image, meta, this.store, {
        limits,
        tools: options.tools === undefined ? true : booleanOption(options.tools, 'options.tools'),
        inlineImages: (options.images === undefined ? 'path' : enumOption(options.images, IMAGE_MODES, 'options.images')) === 'inline',
        withholdResults: options.withhold_results === undefined ? false : booleanOption(options.withhold_results, 'options.withhold_results'),
        presentation,
        ...(options.pixel_bounds === undefined ? {} : { pixelBounds: pixelBoundsOption(options.pixel_bounds, 'options.pixel_bounds') }),
        parse: (text, parseOptions) => this.parser.parse(text, parseOptions),
      });
      this.episodes.set(episode.id, { episode, queue: Promise.resolve() });
      // The task's kind and the tools that apply to it, by name (docs/CONTRACTS.md): what a client
      // needs to present the domain without re-deriving it.
      return { episode_id: episode.id, observation, tools: episode.tools(), presentation: episode.presentationInUse(), kind: task.kind,
               tool_names: episode.offeredToolNames() };
    } catch (err) {
      if (err instanceof EpisodeError) throw new HttpError(400, err.message);
      throw err;
    }
  }

  private async loadTaskImage(task: TaskRecord, taskDir: string, inline: string | undefined): Promise<{ image: RgbImage; meta: PixelMetadata }> {
    // A task without bands (a dataset image with no boxes) gets them from OCR grounding.
    const withMeta = async (image: RgbImage): Promise<PixelMetadata> => {
      let meta: PixelMetadata;
      try {
        meta = resolveMetadata(task.meta, image.width, image.height);
      } catch (err) {
        throw new HttpError(400, `task ${task.id}: bad metadata: ${(err as Error).message}`);
      }
      // Diagrams, scenes and benchmark photographs are never grounded: their tools take points or boxes.
      return (await metadataOrGrounding(image, meta, {}, whyNoGrounding(task))).meta;
    };
    if (inline !== undefined) {
      const image = await decodeImage(Buffer.from(inline, 'base64'), { maxPixels: this.maxPixels() }).catch((err: Error) => {
        if (err instanceof ImageTooLargeError) throw new HttpError(413, `task ${task.id}: image_data ${err.message}`);
        throw new HttpError(400, `task ${task.id}: image_data is not a decodable image (${err.message})`);
      });
      return { image, meta: await withMeta(image) };
    }
    let path: string;
    try {
      path = await resolveInsideRoots([this.opts.root, ...this.opts.moreRoots], taskDir, task.image);
    } catch (err) {
      if (err instanceof PathError) throw new HttpError(400, `task ${task.id}: image ${err.message}`);
      throw err;
    }
    const { mtimeMs } = await stat(path);
    const key = `${path}\n${JSON.stringify(task.meta)}`;
    const cached = this.imageCache.get(key);
    if (cached && cached.mtimeMs === mtimeMs) {
      this.imageCache.delete(key);
      this.imageCache.set(key, cached); // most recently used goes last
      return cached;
    }
    // Refused from the header, before decoding or caching, so an oversized image costs no memory.
    const image = await decodeImage(path, { maxPixels: this.maxPixels() }).catch((err: Error) => {
      if (err instanceof ImageTooLargeError) throw new HttpError(413, `task ${task.id}: ${task.image}: ${err.message}`);
      throw new HttpError(400, `task ${task.id}: cannot decode image ${path} (${err.message})`);
    });
    const loaded = { image, meta: await withMeta(image), mtimeMs };
    this.imageCache.set(key, loaded);
    if (this.imageCache.size > IMAGE_CACHE_SIZE) this.imageCache.delete(this.imageCache.keys().next().value as string);
    return loaded;
  }

  private async stepEpisode(id: string, body: unknown): Promise<unknown> {
    const live = this.live(id);
    const action = parseStepBody(body);
    return this.serially(live, async () => {
      try {
        return await live.episode.step(action);
      } catch (err) {
        if (err instanceof EpisodeError) throw new HttpError(409, err.message);
        throw err;
      }
    });
  }

  private async scoreEpisode(id: string): Promise<ScoreResult> {
    const live = this.live(id);
    return this.serially(live, async () => {
      // The findings go into the trajectory (GET /v1/episodes/:id) and into the score's answer.
      live.score ??= { ...(await this.opts.scorer(live.episode.trajectory(), live.episode.task)), findings: live.episode.scan() };
      return live.score;
    });
  }

  private closeEpisode(id: string): unknown {
    const live = this.live(id);
    live.episode.close('closed');
    this.episodes.delete(id);
    return { closed: true, episode_id: id };
  }

  private serially<T>(live: LiveEpisode, work: () => Promise<T>): Promise<T> {
    const next = live.queue.then(work, work);
    live.queue = next.catch(() => undefined);
    return next;
  }
}

/**
 * A batch/gold item {task}: the task's gold assistant turns, written by the env (env/tasks/gold.ts),
 * and the text of its user turn as a policy reads it (what a tokenizer for the policy learns).
 */
function goldTurns(item: unknown): { tool_turns: string[]; answer: string; user_text: string } {
  if (!isObject(item)) throw new HttpError(400, 'each gold item is {"task": {...}}: a task record as in tasks.jsonl');
  const task = parseTaskRecord(item.task);
  const { toolTurns, answer } = goldTranscript(task);
  return { tool_turns: toolTurns, answer, user_text: questionText(task.question) };
}

/** A presentation block from a request (absent: the env's defaults); a bad one is a 400 that names the key. */
function presentationOption(value: unknown, field: string): Presentation {
  try {
    return parsePresentation(value, field);
  } catch (err) {
    if (err instanceof PresentationError) throw new HttpError(400, err.message);
    throw err;
  }
}

function parseStepBody(body: unknown): Action {
  if (isObject(body) && typeof body.text === 'string') return { text: body.text };
  if (isObject(body) && isObject(body.call)) {
    const { name, arguments: args } = body.call;
    if (typeof name !== 'string') throw new HttpError(400, 'call.name must be a string, e.g. {"call": {"name": "zoom_in", "arguments": {"bbox": [0, 0, 100, 100]}}}');
    if (args !== undefined && !isObject(args)) throw new HttpError(400, 'call.arguments must be an object');
    return { call: { name, arguments: (args as Record<string, unknown> | undefined) ?? {} } };
  }
  throw new HttpError(400, 'a step body is {"text": "<model message>"} or {"call": {"name": ..., "arguments": {...}}}');
}

/** The values openapi.json allows for EpisodeRequest.options.images. */
const IMAGE_MODES = ['path', 'inline'] as const;

function enumOption<T extends string>(value: unknown, allowed: readonly T[], field: string): T {
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
    throw new HttpError(400, `${field} must be one of ${allowed.map((a) => JSON.stringify(a)).join(', ')}, got ${JSON.stringify(value)}`);
  }
  return value as T;
}

/** The policy's image bounds from a request ({min_pixels, max_pixels}); a bad one is a 400 that names the key. */
function pixelBoundsOption(value: unknown, field: string): PixelBounds {
  const example = '{"min_pixels": 3136, "max_pixels": 1003520}';
  if (!isObject(value)) throw new HttpError(400, `${field} must be an object such as ${example}, got ${JSON.stringify(value)}`);
  const extra = Object.keys(value).filter((key) => key !== 'min_pixels' && key !== 'max_pixels');
  if (extra.length > 0) throw new HttpError(400, `${field} has unknown key(s) ${extra.join(', ')}: it takes min_pixels and max_pixels, e.g. ${example}`);
  const bounds = { minPixels: value.min_pixels as number, maxPixels: value.max_pixels as number };
  const problem = typeof bounds.minPixels === 'number' && typeof bounds.maxPixels === 'number' ? pixelBoundsProblem(bounds) : 'min_pixels and max_pixels must be numbers';
  if (problem !== null) throw new HttpError(400, `${field}: ${problem}; give e.g. ${example}`);
  return bounds;
}

function booleanOption(value: unknown, field: string): boolean {
  if (typeof value !== 'boolean') throw new HttpError(400, `${field} must be true or false, got ${JSON.stringify(value)}`);
  return value;
}

function positiveInt(value: unknown, field: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > 1000) {
    throw new HttpError(400, `${field} must be an integer from 1 to 1000, got ${JSON.stringify(value)}`);
  }
  return value;
}
