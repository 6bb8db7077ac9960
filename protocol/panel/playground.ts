/**
 * The tool playground's messages: the tools it offers, a session's snapshot, opening an image (by
 * upload or by a path on the host, with calls to replay), applying and undoing a call, and the
 * command and notification that bring an image into the playground from elsewhere.
 *
 * Types, method names and guards only: no behaviour, no DOM, no Node.
 */
import { hasFields, isRecord, isString, optional } from '../guards.js';
import { command, isEmpty, notification, request } from './messages.js';

/** A tool as the playground shows it: its JSON Schema drives the argument form. */
export interface ToolInfo {
  name: string;
  description: string;
  parameters: { type: 'object'; properties: Record<string, unknown>; required: string[] };
}

export interface PlaygroundCall {
  name: string;
  arguments: Record<string, unknown>;
}

export interface PlaygroundImage {
  /** A data: URL of the PNG, so both hosts show it without serving files. */
  src: string;
  width: number;
  height: number;
}

export interface PlaygroundSnapshot {
  session: string;
  /** The opened file's name; null before anything is opened. */
  name: string | null;
  /** images[0] is the opened image; images[i + 1] is the result of calls[i]. */
  images: PlaygroundImage[];
  calls: { call: PlaygroundCall; summary: string }[];
  /** Labels the tools accept, by argument name (columns, rows, x_values, y_values), from the current metadata. */
  labels: Record<string, string[]>;
  /** Tools that make sense for the current image and metadata. */
  availableTools: string[];
  /** Where the metadata came from ('sidecar file x.json', 'uploaded y.json'), or null when there is none. */
  metadataSource: string | null;
  /** The last apply's error (E1–E5 and the message the model would read), cleared by the next success. */
  error: { class: string; message: string } | null;
  /**
   * After an open that replayed calls: the call the panel's form should hold (the last one applied,
   * or the one that failed and so is not in `calls`); null once anything else is applied or undone.
   */
  replayed?: PlaygroundCall | null;
}

/** An image to open: uploaded bytes (base64) with a file name, or a path on the host inside an allowed root. */
export type PlaygroundSource = { name: string; base64: string } | { path: string };

export interface PlaygroundMetadata {
  name: string;
  text: string;
  source?: string;
}

export interface PlaygroundOpenParams {
  session: string;
  image: PlaygroundSource;
  /**
   * Metadata JSON text (uploaded, or a task record the host found); without it the host looks for
   * a sidecar `<image>.json` or the task folder's tasks.jsonl beside a path. `source` says where
   * it came from, for the status line (default: "uploaded NAME").
   */
  metadata?: PlaygroundMetadata;
  /**
   * Calls to replay on the opened image, in order (a logged call from the rollout viewer, with the
   * calls before it in its episode): each is applied as Apply would; the first that fails stops
   * the replay, and its error is the snapshot's.
   */
  calls?: PlaygroundCall[];
}

/** Most calls one open may replay. */
export const MAX_REPLAYED_CALLS = 16;

export const isPlaygroundMetadata = (m: unknown): m is PlaygroundMetadata => hasFields(m, { name: isString, text: isString, source: optional(isString) });

function isSource(value: unknown): value is PlaygroundSource {
  return hasFields(value, { name: isString, base64: isString }) || hasFields(value, { path: isString });
}

export function isCall(value: unknown): value is PlaygroundCall {
  return hasFields(value, { name: isString, arguments: isRecord });
}

const isReplay = (v: unknown): v is PlaygroundCall[] => Array.isArray(v) && v.length <= MAX_REPLAYED_CALLS && v.every(isCall);

export const ToolsListRequest = request<Record<string, never>, { tools: ToolInfo[] }>()('tools/list', isEmpty);

export const PlaygroundOpenRequest = request<PlaygroundOpenParams, PlaygroundSnapshot>()('playground/open', (p): p is PlaygroundOpenParams =>
  hasFields(p, { session: isString, image: isSource, metadata: optional(isPlaygroundMetadata), calls: optional(isReplay) }),
);

export const PlaygroundApplyRequest = request<{ session: string; call: PlaygroundCall }, PlaygroundSnapshot>()('playground/apply', (p): p is { session: string; call: PlaygroundCall } =>
  hasFields(p, { session: isString, call: isCall }),
);

export const PlaygroundUndoRequest = request<{ session: string }, PlaygroundSnapshot>()('playground/undo', (p): p is { session: string } => hasFields(p, { session: isString }));

export const PlaygroundSnapshotRequest = request<{ session: string }, PlaygroundSnapshot>()('playground/snapshot', (p): p is { session: string } =>
  hasFields(p, { session: isString }),
);

export interface ShowInPlaygroundParams {
  path: string;
  metadata: PlaygroundMetadata | null;
  /** Calls to replay on it (PlaygroundOpenParams.calls); absent: the image alone. */
  calls?: PlaygroundCall[];
}

/** Open an image file (with its metadata, and calls to replay) in the tool playground: the VS Code host opens or reveals that panel. */
export const ShowInPlaygroundCommand = command<ShowInPlaygroundParams>()('playground/show', (p): p is ShowInPlaygroundParams =>
  hasFields(p, { path: isString, metadata: (m) => m === null || isPlaygroundMetadata(m), calls: optional(isReplay) }),
);

/** The host opened an image in the playground (VS Code: explorer context menu). */
export const PlaygroundOpenedNotification = notification<{ snapshot: PlaygroundSnapshot }>()('playground/didOpen', (p): p is { snapshot: PlaygroundSnapshot } =>
  hasFields(p, { snapshot: isRecord }),
);
