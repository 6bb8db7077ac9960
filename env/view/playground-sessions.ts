/**
 * The tool playground's host side: per panel session, a stack of images, each the result of a
 * real tool call through `runToolCall` (the same engine the trainer and the env server use).
 * Open, apply, undo; every answer is a complete snapshot. A failed call leaves the stack as it
 * was and reports the error exactly as a model would read it.
 *
 * Opening by path is confined to the allowed roots (resolveInsideRoot); uploads are decoded by
 * sharp and bounded in bytes and pixels. Nothing the panel sends is executed.
 */
import { readFile, realpath } from 'node:fs/promises';
import { basename, dirname, extname, join, relative, resolve } from 'node:path';
import { decodeImage, encodePng, ImageTooLargeError, type RgbImage } from '../core/image.js';
import { resolveInsideRoot } from '../core/paths.js';
import { DEFAULT_LIMITS } from '../episodes/episode.js';
import { bandFamiliesOf, bandKey, type ImageMetadata, type PixelMetadata, resolveMetadata } from '../tools/metadata.js';
import { runToolCall, toolNamesForTask } from '../tools/registry.js';
import { metadataOrGrounding } from '../grounding/fallback.js';
import type { PlaygroundCall, PlaygroundOpenParams, PlaygroundSnapshot } from '../../protocol/panel-protocol.js';
import { isRecord } from '../../protocol/guards.js';
import { findInTaskFile } from '../runs/run-task-record.js';

interface Layer {
  image: RgbImage;
  meta: PixelMetadata;
  src: string;
  call?: PlaygroundCall;
  summary?: string;
}

interface Session {
  name: string;
  metadataSource: string | null;
  layers: Layer[];
  error: { class: string; message: string } | null;
  /** The call a replay left for the form (the last applied, or the one that failed), until the next apply or undo. */
  replayed: PlaygroundCall | null;
}

export class PlaygroundError extends Error {
  override name = 'PlaygroundError';
}

const MAX_UPLOAD_BYTES = 25 << 20;
const MAX_SESSIONS = 32;
const IMAGE_EXTENSIONS = new Set(['.png', '.jpg', '.jpeg']);

async function dataUrl(image: RgbImage): Promise<string> {
  return `data:image/png;base64,${(await encodePng(image)).toString('base64')}`;
}

/**
 * Metadata from a JSON document: an ImageMetadata object, or a document holding one in `meta` (a
 * task record, with or without its question: a line of tasks.jsonl, a rollout's task) when the
 * document has no bands of its own.
 */
function metadataFrom(document: unknown, where: string): ImageMetadata {
  if (isRecord(document) && isRecord(document.meta) && !Object.keys(document).some((key) => key.endsWith('_bbox'))) return document.meta as ImageMetadata;
  if (isRecord(document)) return document as ImageMetadata;
  throw new PlaygroundError(`${where} must be a JSON object with *_bbox fields (or a task record with "meta"), got ${Array.isArray(document) ? 'a list' : typeof document}`);
}

export class PlaygroundSessions {
  private readonly sessions = new Map<string, Session>();

  private readonly roots: string[];

  /** `roots`: folders whose images may be opened by path. */
  constructor(roots: readonly string[]) {
    this.roots = [...roots];
  }

  /** Lets images under `root` be opened by path too (a run another panel shows sends one here). */
  allowRoot(root: string): void {
    if (!this.roots.includes(root)) this.roots.push(root);
  }

  async open(params: PlaygroundOpenParams): Promise<PlaygroundSnapshot> {
    let bytes: Buffer;
    let name: string;
    let sidecar: { text: string; source: string } | null = null;
    if ('path' in params.image) {
      const path = await this.allowedPath(params.image.path);
      if (!IMAGE_EXTENSIONS.has(extname(path).toLowerCase())) throw new PlaygroundError(`'${params.image.path}' is not a PNG or JPEG file`);
      bytes = await readFile(path);
      name = basename(path);
      sidecar = await this.findSidecar(path);
    } else {
      bytes = Buffer.from(params.image.base64, 'base64');
      name = params.image.name;
      if (bytes.length > MAX_UPLOAD_BYTES) throw new PlaygroundError(`${name} is ${bytes.length} bytes; the playground opens images up to ${MAX_UPLOAD_BYTES} bytes`);
    }
    let image: RgbImage;
    try {
      image = await decodeImage(bytes, { maxPixels: DEFAULT_LIMITS.maxPixels });
    } catch (err) {
      if (err instanceof ImageTooLargeError) {
        throw new PlaygroundError(`${name} is ${err.width}×${err.height} pixels, over the ${DEFAULT_LIMITS.maxPixels}-pixel limit episodes use`);
      }
      throw new PlaygroundError(`${name} could not be decoded as an image (${(err as Error).message}); open a PNG or JPEG`);
    }
    const given = params.metadata ? { text: params.metadata.text, source: params.metadata.source ?? `uploaded ${params.metadata.name}` } : sidecar;
    let meta: PixelMetadata = { unit: 'pixels' };
    if (given) {
      let document: unknown;
      try {
        document = JSON.parse(given.text);
      } catch (err) {
        throw new PlaygroundError(`metadata (${given.source}) is not valid JSON: ${(err as Error).message}`);
      }
      meta = resolveMetadata(metadataFrom(document, given.source), image.width, image.height);
    }
    // An image without bands gets them from OCR grounding, so the focus tools work on any chart or table.
    const choice = await metadataOrGrounding(image, meta);
    meta = choice.meta;
    const metadataSource = given?.source ?? (choice.source === 'ocr' ? 'OCR grounding' : null);
    const session: Session = { name, metadataSource, layers: [{ image, meta, src: await dataUrl(image) }], error: null, replayed: null };
    this.sessions.delete(params.session);
    this.sessions.set(params.session, session);
    while (this.sessions.size > MAX_SESSIONS) this.sessions.delete(this.sessions.keys().next().value as string);
    // A logged call replayed: applied as Apply would, in order; the first that fails stops the replay (its error is shown).
    for (const call of params.calls ?? []) {
      const snapshot = await this.apply(params.session, call);
      session.replayed = call;
      if (snapshot.error) return this.snapshot(params.session);
    }
    return this.snapshot(params.session);
  }

  async apply(sessionId: string, call: PlaygroundCall): Promise<PlaygroundSnapshot> {
    const session = this.session(sessionId);
    const top = session.layers[session.layers.length - 1] as Layer;
    session.replayed = null;
    const outcome = await runToolCall(top.image, call, top.meta);
    if (!outcome.ok) {
      session.error = { class: outcome.error.class, message: outcome.error.message };
      return this.snapshot(sessionId);
    }
    session.error = null;
    session.layers.push({ image: outcome.image, meta: outcome.meta ?? top.meta, src: await dataUrl(outcome.image), call, summary: outcome.summary });
    return this.snapshot(sessionId);
  }

  undo(sessionId: string): PlaygroundSnapshot {
    const session = this.session(sessionId);
    if (session.layers.length > 1) session.layers.pop();
    session.error = null;
    session.replayed = null;
    return this.snapshot(sessionId);
  }

  snapshot(sessionId: string): PlaygroundSnapshot {
    const session = this.sessions.get(sessionId);
    if (!session) return { session: sessionId, name: null, images: [], calls: [], labels: {}, availableTools: [], metadataSource: null, error: null };
    const top = session.layers[session.layers.length - 1] as Layer;
    const labels: Record<string, string[]> = {};
    for (const family of bandFamiliesOf(top.meta)) labels[family] = Object.keys(top.meta[bandKey(family)] ?? {});
    // A diagram's point labels, for the point arguments (through, endpoints, center, point).
    if (top.meta.points && Object.keys(top.meta.points).length > 0) labels.points = Object.keys(top.meta.points);
    return {
      session: sessionId,
      name: session.name,
      images: session.layers.map((l) => ({ src: l.src, width: l.image.width, height: l.image.height })),
      calls: session.layers.slice(1).map((l) => ({ call: l.call as PlaygroundCall, summary: l.summary ?? '' })),
      labels,
      availableTools: toolNamesForTask(undefined, top.meta),
      metadataSource: session.metadataSource,
      error: session.error,
      replayed: session.replayed,
    };
  }

  private session(id: string): Session {
    const session = this.sessions.get(id);
    if (!session) throw new PlaygroundError(`no image is open in playground session '${id}'; open a PNG or JPEG first`);
    return session;
  }

  private async allowedPath(path: string): Promise<string> {
    const errors: string[] = [];
    for (const root of this.roots) {
      try {
        return await resolveInsideRoot(root, root, path);
      } catch (err) {
        errors.push((err as Error).message);
      }
    }
    throw new PlaygroundError(this.roots.length === 0 ? `opening files by path is off: start vistool view with --root DIR` : `cannot open '${path}': ${errors.join('; ')}`);
  }

  /** `x.json`, `x.meta.json` or `x.png.json` beside image `x.png`, when one exists inside a root. */
  private async findSidecar(imagePath: string): Promise<{ text: string; source: string } | null> {
    const stem = basename(imagePath, extname(imagePath));
    for (const candidate of [`${stem}.json`, `${stem}.meta.json`, `${basename(imagePath)}.json`]) {
      const full = join(dirname(imagePath), candidate);
      try {
        const real = await this.allowedPath(full);
        return { text: await readFile(real, 'utf8'), source: `sidecar file ${candidate}` };
      } catch {
        continue;
      }
    }
    return this.findTaskRecord(imagePath);
  }

  /**
   * The task record that names this image, in the tasks.jsonl of the task folder it sits in
   * (`data gen` and `data convert` write DIR/tasks.jsonl beside DIR/images/, and runs keep their
   * tasks so): its `meta` is the image's metadata, so no separate JSON is needed.
   */
  private async findTaskRecord(imagePath: string): Promise<{ text: string; source: string } | null> {
    const real = await realpath(imagePath);
    for (const folder of [dirname(imagePath), dirname(dirname(imagePath))]) {
      let tasks: string;
      try {
        tasks = await this.allowedPath(join(folder, 'tasks.jsonl'));
      } catch {
        continue;
      }
      const found = await findInTaskFile(tasks, basename(imagePath), async (record) =>
        typeof record.image === 'string' && (await realpath(resolve(dirname(tasks), record.image)).catch(() => null)) === real,
      );
      if (found) return { text: found.line, source: `task ${String(found.record.id ?? '?')} in ${relative(folder, tasks) || 'tasks.jsonl'}` };
    }
    return null;
  }
}
