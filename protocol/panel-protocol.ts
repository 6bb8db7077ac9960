/**
 * The one message protocol between a panel (a web app under webview/) and its host (a VS Code
 * webview panel, or `vistool view` in a browser). Every message type is declared here once and
 * shared by both sides, in the GitLens style: commands (panel → host, no answer), requests
 * (panel → host, one typed response), notifications (host → panel). Method names are
 * namespaced (`metrics/rows`), and every type has an `is()` guard that checks the envelope and
 * the shape of the params, because a host must not trust what a panel sends.
 *
 * Design rules (docs/webview-architecture in GitLens):
 * - Notifications carry complete snapshots (all run summaries), never deltas, so a panel that
 *   missed one (hidden, reloading) is whole again after the next.
 * - Bulk data (metric rows, rollout indexes and records) is pulled by the panel with an
 *   explicit range or key; the summary snapshot says how much exists, so a panel can always
 *   tell what it lacks. What a chart draws is shaped by the host (metrics/series: a bounded
 *   number of points per line), so the answer's size does not grow with the run.
 * - Panels persist only navigation and UI state (see webview/shared/host.ts), never data.
 *
 * This file holds types, method names and guards only: no behaviour, no DOM, no Node.
 */
import { hasFields, isFiniteNumber, isNonNegativeInteger, isNumberInRange, isRecord, isString, isStringArray, optional } from './guards.js';
import type { WallClockSource } from './metric-math.js';
import type { RolloutRecord } from './rollout-record.js';
import type { Annotation, AnnotationTarget } from './annotation.js';
import type { FadingVerdict } from './tool-fading.js';
import { isRolloutFacets, type RolloutFacets } from './rollout-filter.js';

// ---------------------------------------------------------------------------------------------
// Envelopes

export interface CommandMessage<P = unknown> {
  kind: 'command';
  id: string;
  method: string;
  params: P;
}

export interface RequestMessage<P = unknown> {
  kind: 'request';
  id: string;
  method: string;
  params: P;
}

export type ResponseMessage<R = unknown> =
  | { kind: 'response'; id: string; method: string; ok: true; result: R }
  | { kind: 'response'; id: string; method: string; ok: false; error: { message: string } };

export interface NotificationMessage<P = unknown> {
  kind: 'notification';
  method: string;
  params: P;
}

export type PanelToHostMessage = CommandMessage | RequestMessage;
export type HostToPanelMessage = ResponseMessage | NotificationMessage;

type ParamsCheck<P> = (params: unknown) => params is P;

export interface CommandType<P> {
  readonly kind: 'command';
  readonly method: string;
  readonly isParams: ParamsCheck<P>;
  is(message: unknown): message is CommandMessage<P>;
}

export interface RequestType<P, R> {
  readonly kind: 'request';
  readonly method: string;
  readonly isParams: ParamsCheck<P>;
  is(message: unknown): message is RequestMessage<P>;
  /** Never set: carries the response type for `RequestResult<typeof X>`. */
  readonly _result?: R;
}

export interface NotificationType<P> {
  readonly kind: 'notification';
  readonly method: string;
  readonly isParams: ParamsCheck<P>;
  is(message: unknown): message is NotificationMessage<P>;
}

export type RequestParams<T> = T extends RequestType<infer P, unknown> ? P : never;
export type RequestResult<T> = T extends RequestType<unknown, infer R> ? R : never;

function envelope(message: unknown, kind: string, method: string): message is Record<string, unknown> {
  return isRecord(message) && message.kind === kind && message.method === method && (kind === 'notification' || isString(message.id));
}

function command<P>(method: string, isParams: ParamsCheck<P>): CommandType<P> {
  return { kind: 'command', method, isParams, is: (m): m is CommandMessage<P> => envelope(m, 'command', method) && isParams(m.params) };
}

function request<P, R>(method: string, isParams: ParamsCheck<P>): RequestType<P, R> {
  return { kind: 'request', method, isParams, is: (m): m is RequestMessage<P> => envelope(m, 'request', method) && isParams(m.params) };
}

function notification<P>(method: string, isParams: ParamsCheck<P>): NotificationType<P> {
  return { kind: 'notification', method, isParams, is: (m): m is NotificationMessage<P> => envelope(m, 'notification', method) && isParams(m.params) };
}

const empty = (p: unknown): p is Record<string, never> => isRecord(p);

/** Any well-formed panel → host envelope (the method may still be unknown). */
export function isPanelToHostMessage(message: unknown): message is PanelToHostMessage {
  return isRecord(message) && (message.kind === 'command' || message.kind === 'request') && isString(message.id) && isString(message.method);
}

export function isResponseMessage(message: unknown): message is ResponseMessage {
  return isRecord(message) && message.kind === 'response' && isString(message.id) && isString(message.method) && typeof message.ok === 'boolean';
}

export function isNotificationMessage(message: unknown): message is NotificationMessage {
  return isRecord(message) && message.kind === 'notification' && isString(message.method);
}

// ---------------------------------------------------------------------------------------------
// Data carried by the messages

export type PanelKind = 'dashboard' | 'viewer' | 'playground';

/** Each panel's name, the same in its header, its browser page title and its editor tab. */
export const PANEL_TITLES: Readonly<Record<PanelKind, string>> = { dashboard: 'Training dashboard', viewer: 'Rollout viewer', playground: 'Tool playground' };
export const PANEL_KINDS: readonly PanelKind[] = ['dashboard', 'viewer', 'playground'];

/**
 * An evaluation of a checkpoint. Read from, in order of preference: `metrics.jsonl` lines with
 * `"stage": "eval"`, `run.json` `evaluations` ({label: metrics}), `results.json`, and
 * `eval/*.json` (see env/runs/evaluations.ts for the accepted shapes). Metric names follow the
 * trainer: `eval/acc_tools`, `eval/acc_no_tools`, `eval/tool_call_rate`, ...
 */
export interface EvalResult {
  label: string;
  step: number | null;
  /** The file it came from, relative to the run directory. */
  source: string;
  metrics: Record<string, number>;
}

/** What a panel knows about a run without loading its data: a complete snapshot, cheap to resend. */
export interface RunSummary {
  id: string;
  name: string;
  /** Absolute path of the run directory on the host. */
  path: string;
  /** run.json `status` (running, finished, failed, interrupted, ...), null when there is no run.json. */
  status: string | null;
  /** run.json `engine`: what trained the run when it was not vistool's own trainer ("verl"), else null. */
  engine: string | null;
  /** Unix seconds from run.json, when present. */
  startedAt: number | null;
  updatedAt: number | null;
  /** Complete training lines in metrics.jsonl (evaluation lines are counted in `evaluations`). */
  metricRows: number;
  metricNames: string[];
  /**
   * Per metric, over the rows read: how many rows have it and its range. The dashboard's defaults
   * show what varies (a metric flat at one value, or with a point or two, stays in the picker).
   */
  metricStats?: Record<string, { count: number; min: number; max: number }>;
  rolloutSteps: number;
  evaluations: EvalResult[];
  /** Problems reading the run (unreadable run.json, lines that are not JSON), for a banner. */
  problems: string[];
  /** Whether the run is read with a report.html (its own, or its folder of runs': env/runs/run-groups.ts), which `report/show` opens. */
  report?: boolean;
  /**
   * Present while the host is still reading metrics.jsonl for the first time (a big file is read
   * in slices after the host starts answering): `metricRows` counts the rows read so far.
   */
  metricsLoading?: {
    bytesRead: number;
    bytesTotal: number;
    /** Lines sampled from the unread part, which the charts draw beyond the rows read (metric series' `preview`). */
    sampledLines?: number;
  };
}

/**
 * Training metric rows in columns: `steps[i]`, `times[i]` and `columns[name][i]` describe row i.
 * Null where a row lacks the metric. `times` are Unix seconds from the row's `time` or
 * `timestamp` field (a number, or an ISO date string), null when it has neither.
 */
export interface MetricTable {
  steps: number[];
  times: (number | null)[];
  /** Each row's `stage` ("sft", "rl", ...; null when the line has none): the dashboard marks where it changes. */
  stages: (string | null)[];
  columns: Record<string, (number | null)[]>;
}

/** Points of a chart line as two columns, x ascending. */
export interface SeriesPoints {
  x: number[];
  y: number[];
}

/** One metric of one run, shaped by the host for a chart (metrics/series). */
export interface MetricSeries {
  metric: string;
  /**
   * The values against the chosen x axis, rows without one left out: every point when they fit
   * in `maxPoints`, else the first, the last and each bucket's lowest and highest point
   * (env/runs/downsample.ts has the exact rule).
   */
  raw: SeriesPoints;
  /** The debiased EMA computed over every point, then downsampled the same way; null when smoothing is 0. */
  smoothed: SeriesPoints | null;
  /** Over every point of the series, whatever the range: what the chart's stats line shows. */
  stats: { min: number; max: number; last: number; count: number } | null;
  /** Points inside the requested range (all of them without one) before downsampling. */
  inRange: number;
}

export interface MetricSeriesParams {
  runId: string;
  metrics: string[];
  xAxis: 'step' | 'time';
  /** EMA weight, 0 for none. */
  smoothing: number;
  /** Most points per line: about the chart's width in pixels. */
  maxPoints: number;
  /** Only x in [min, max] (a zoomed chart), plus the point on either side so the line reaches the edges. */
  range?: { min: number; max: number };
}

export interface MetricSeriesResult {
  runId: string;
  /** The training rows the series were computed from. */
  rows: number;
  /** What x is: the step, or the wall clock from the rows' time or from their seconds per step (null: the run has neither). */
  xSource: 'step' | WallClockSource;
  series: MetricSeries[];
  /** Where the run changes stage, on the chosen x axis. */
  phases: { x: number; stage: string }[];
  /** Whether tool use collapsed, judged on every row (protocol/tool-fading.ts); null with too few rows. */
  toolFading: FadingVerdict | null;
  /**
   * While the host still reads a big metrics.jsonl: the lines beyond x `after` are sampled ones
   * (`rows` of them), drawn until the rows there are read. Only on the step axis; `rows`, the
   * tool-fading verdict and the stats' count and last are the rows read's (min and max include
   * the samples).
   */
  preview?: { after: number; rows: number };
}

export interface StepFileInfo {
  step: number;
  /** Path relative to the run directory, e.g. rollouts/step-000003.jsonl. */
  file: string;
  bytes: number;
}

/** One line of a rollout file, reduced to what lists, groups and filters need. */
export interface RolloutSummary {
  /** 0-based line number in the step file: the key for `rollouts/record`. */
  line: number;
  promptId: string;
  /** Index of the rollout within its group (the trainer's `group`), null when absent. */
  group: number | null;
  /** Whether dynamic sampling used this rollout's group for the update (the trainer's `kept`); null when the record does not say. */
  kept: boolean | null;
  question: string;
  gold: string | string[] | null;
  answer: string | string[] | null;
  correct: boolean | null;
  reward: number | null;
  advantage: number | null;
  /** Counted from the turns by protocol/tool-use.ts: calls that ran, calls that failed, errors of no call. */
  toolCalls: number;
  toolErrors: number;
  formatErrors: number;
  errorClasses: string[];
  toolNames: string[];
  turns: number;
  endReason: string | null;
  /** An evaluation's record: the arm it ran in (the record's `arm`); absent for training rollouts. */
  arm?: EvalArm;
}

export interface StepIndex {
  runId: string;
  step: number;
  rollouts: RolloutSummary[];
  /** Lines that could not be read as a rollout record, with why. */
  skipped: { line: number; reason: string }[];
}

/** Where a search found its text in a rollout record. */
export type SearchField = 'question' | 'prompt id' | 'answer' | 'gold' | 'turn';

/** One rollout a run-wide search found: enough to name it and jump to it (`rollouts/record` by step and line). */
export interface RolloutSearchMatch {
  step: number;
  /** 0-based line in the step file, as in RolloutSummary. */
  line: number;
  promptId: string;
  /** The first field that holds the text (question, prompt id, answer, gold, then the turns in order); with no text, 'question'. */
  field: SearchField;
  /** Index into `turns` when `field` is 'turn', with that turn's role. */
  turn: number | null;
  role: string | null;
  /** Up to about SNIPPET_CHARS of the field around the first occurrence, whitespace folded: model text, to be shown as text only. */
  snippet: string;
  /** Where the found text starts and ends in `snippet` (both 0 with no text). */
  start: number;
  end: number;
}

export interface RolloutSearchParams {
  runId: string;
  /** Case-insensitive text to find; '' matches every rollout the facets let through. */
  query: string;
  filter: RolloutFacets;
  /** Most matches to return (default SEARCH_LIMIT); the per-step counts always cover the whole run. */
  limit?: number;
  /** List matches from this step and line on (the next page, or one step's matches); default the run's start. */
  from?: { step: number; line: number };
}

export interface RolloutSearchResult {
  runId: string;
  query: string;
  filter: RolloutFacets;
  /** Matching rollouts per step file, every step that has one, ascending. */
  steps: { step: number; matches: number }[];
  /** Matching rollouts in the whole run. */
  total: number;
  /** The first matches in step and line order at or after `from`, at most `limit`. */
  matches: RolloutSearchMatch[];
  /** Where the listing starts (`from`, or step 0 line 0). */
  from: { step: number; line: number };
  /** True when more matches lie at or after `from` than are listed: ask again from after the last one for more. */
  capped: boolean;
  /** What was read: step files, rollout records, and lines that are not rollout records. */
  scanned: { steps: number; rollouts: number; skipped: number };
  /** The error classes and tool names of every rollout read (matching or not), so the facets can offer what other steps hold. */
  seen: { errorClasses: string[]; toolNames: string[] };
}

/** A rollout record as in docs/CONTRACTS.md. */
export type { RolloutRecord };
export type { Annotation, AnnotationTarget };

// ---------------------------------------------------------------------------------------------
// Evaluations kept task by task (env/runs/eval-sets.ts), compared and followed through training

export type EvalArm = 'tools' | 'no_tools';
export const EVAL_ARMS: readonly EvalArm[] = ['tools', 'no_tools'];

/** One evaluation of a run whose every task's rollout was kept: the trainer's rollouts/eval-<label>.jsonl, or a `vistool eval` folder's rollouts. */
export interface EvalSetInfo {
  /** Names the set within its run (`evals/compare`, `evals/record`). */
  key: string;
  label: string;
  /** The step it evaluated (the checkpoint's), null when unknown. */
  step: number | null;
  /** Path relative to the run directory. */
  file: string;
  bytes: number;
}

/** One side of a comparison: an evaluation of a run, in one arm. */
export interface EvalSide {
  runId: string;
  key: string;
  arm: EvalArm;
}

/** How a task fared from side a to side b. */
export type CompareOutcome = 'fixed' | 'broken' | 'both_wrong' | 'both_right' | 'only_a' | 'only_b';
export const COMPARE_OUTCOMES: readonly CompareOutcome[] = ['fixed', 'broken', 'both_wrong', 'both_right', 'only_a', 'only_b'];

/** A task's rollout on one side of a comparison: where to read it, and what the list shows. */
export interface ComparedRollout {
  line: number;
  correct: boolean | null;
  answer: string | string[] | null;
  reward: number | null;
  toolCalls: number;
  toolErrors: number;
  formatErrors: number;
  errorClasses: string[];
}

export interface ComparedTask {
  promptId: string;
  question: string;
  gold: string | string[] | null;
  outcome: CompareOutcome;
  a: ComparedRollout | null;
  b: ComparedRollout | null;
}

export interface EvalComparison {
  a: EvalSide & { label: string; step: number | null };
  b: EvalSide & { label: string; step: number | null };
  /** Every task either side has, in side a's order, then side b's others. */
  tasks: ComparedTask[];
  counts: Record<CompareOutcome, number>;
  /** Accuracy of each side over the tasks both have (the counts' denominators). */
  shared: number;
}

/** Where one task appeared in a run: a training step's rollout or an evaluation's. */
export interface TimelineEntry {
  kind: 'step' | 'eval';
  /** The training step, or the step the evaluation evaluated (null when unknown). */
  step: number | null;
  /** The evaluation's set key and label, and its arm (kind 'eval'). */
  key?: string;
  label?: string;
  arm?: EvalArm;
  line: number;
  /** The rollout's index in its group (training). */
  group: number | null;
  correct: boolean | null;
  answer: string | string[] | null;
  reward: number | null;
  toolCalls: number;
  toolNames: string[];
  errorClasses: string[];
}

export interface TaskTimeline {
  runId: string;
  promptId: string;
  question: string;
  gold: string | string[] | null;
  /** Training rollouts by step, then evaluations by step (and label). */
  entries: TimelineEntry[];
  /** Files read, and lines that were not rollout records. */
  scanned: { files: number; rollouts: number; skipped: number };
}

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

export type CallFormat = 'json' | 'hermes' | 'openthinkimg' | 'refocus';

// ---------------------------------------------------------------------------------------------
// Commands (panel → host)

/** The panel has loaded and listens: the host sends the current snapshots. */
export const ReadyCommand = command<{ panel: PanelKind }>('webview/ready', (p): p is { panel: PanelKind } =>
  hasFields(p, { panel: (v) => PANEL_KINDS.includes(v as PanelKind) }),
);

/** An error inside a panel, reported so the host can log it (tests fail on these). */
export const ErrorCommand = command<{ panel: PanelKind; message: string }>('webview/error', (p): p is { panel: PanelKind; message: string } =>
  hasFields(p, { panel: (v) => PANEL_KINDS.includes(v as PanelKind), message: isString }),
);

/** Save a file the panel made (PNG or CSV export). The VS Code host shows a save dialog; the browser host downloads it locally. */
export const SaveFileCommand = command<{ name: string; mime: string; base64: string }>('file/save', (p): p is { name: string; mime: string; base64: string } =>
  hasFields(p, { name: isString, mime: isString, base64: isString }),
);

export interface ShowInPlaygroundParams {
  path: string;
  metadata: PlaygroundMetadata | null;
  /** Calls to replay on it (PlaygroundOpenParams.calls); absent: the image alone. */
  calls?: PlaygroundCall[];
}

/** Open an image file (with its metadata, and calls to replay) in the tool playground: the VS Code host opens or reveals that panel. */
export const ShowInPlaygroundCommand = command<ShowInPlaygroundParams>('playground/show', (p): p is ShowInPlaygroundParams =>
  hasFields(p, { path: isString, metadata: (m) => m === null || isPlaygroundMetadata(m), calls: optional((v) => Array.isArray(v) && v.length <= MAX_REPLAYED_CALLS && v.every(isCall)) }),
);

export interface ShowInViewerParams {
  /** The run's id in the sending panel, and its directory (a VS Code host opens the viewer on the directory: ids are per panel). */
  runId: string;
  path: string;
  /** A step that has a rollouts file (the dashboard picks the nearest to the clicked point). */
  step: number;
}

/** Open the rollout viewer on a run at a step (a dashboard chart point): the VS Code host opens or reveals that panel; a browser opens the viewer page itself (`viewer?run=ID&step=N`). */
export const ShowInViewerCommand = command<ShowInViewerParams>('viewer/show', (p): p is ShowInViewerParams =>
  hasFields(p, { runId: isString, path: isString, step: isNonNegativeInteger }),
);

/** Open the report.html a run is read with: the VS Code host in an editor tab; a browser opens `report/<runId>/` itself. */
export const ShowReportCommand = command<{ runId: string }>('report/show', (p): p is { runId: string } => hasFields(p, { runId: isString }));

/**
 * The panel no longer wants the answer to its request `id` (a search superseded or cleared): the
 * host stops working on it where it can (a search across steps stops reading step files) and
 * answers it as cancelled. A browser page also cancels by closing the request's connection.
 */
export const CancelRequestCommand = command<{ id: string }>('request/cancel', (p): p is { id: string } => hasFields(p, { id: isString }));

// ---------------------------------------------------------------------------------------------
// Requests (panel → host → panel)

export const RunsListRequest = request<Record<string, never>, { runs: RunSummary[] }>('runs/list', empty);

/**
 * Every row from `from` on, with every metric or only those in `columns`. A dashboard asks for
 * metrics/series to draw; whole rows are for exports and for hosts' own summaries.
 */
export const MetricRowsRequest = request<{ runId: string; from: number; columns?: string[] }, { runId: string; from: number; total: number; table: MetricTable }>(
  'metrics/rows',
  (p): p is { runId: string; from: number; columns?: string[] } => hasFields(p, { runId: isString, from: isNonNegativeInteger, columns: optional(isStringArray) }),
);

/** Most points per line a panel may ask for. */
export const MAX_SERIES_POINTS = 20_000;

/** The charts' lines of one run, downsampled by the host so the answer stays small however long the run. */
export const MetricSeriesRequest = request<MetricSeriesParams, MetricSeriesResult>('metrics/series', (p): p is MetricSeriesParams =>
  hasFields(p, {
    runId: isString,
    metrics: isStringArray,
    xAxis: (v) => v === 'step' || v === 'time',
    smoothing: (v) => isNumberInRange(v, 0, 0.999),
    maxPoints: (v) => isNonNegativeInteger(v) && v >= 4 && v <= MAX_SERIES_POINTS,
    range: optional((r) => hasFields(r, { min: isFiniteNumber, max: isFiniteNumber })),
  }),
);

export const RolloutStepsRequest = request<{ runId: string }, { runId: string; steps: StepFileInfo[] }>('rollouts/steps', (p): p is { runId: string } =>
  hasFields(p, { runId: isString }),
);

export const RolloutIndexRequest = request<{ runId: string; step: number }, StepIndex>('rollouts/index', (p): p is { runId: string; step: number } =>
  hasFields(p, { runId: isString, step: isNonNegativeInteger }),
);

/**
 * Where the weights of a record that has none were found (env/runs/record-weights.ts): the host
 * puts them in the record's `reward_weights` only when they reproduce its reward, and says so here.
 */
export interface InferredWeights {
  inferredWeights?: string;
}

export const RolloutRecordRequest = request<{ runId: string; step: number; line: number }, { runId: string; step: number; line: number; record: RolloutRecord } & InferredWeights>(
  'rollouts/record',
  (p): p is { runId: string; step: number; line: number } => hasFields(p, { runId: isString, step: isNonNegativeInteger, line: isNonNegativeInteger }),
);

/** Most characters a search query may have, and the default and largest number of matches a search returns. */
export const SEARCH_QUERY_MAX = 200;
export const SEARCH_LIMIT = 200;
export const SEARCH_LIMIT_MAX = 1000;

/** Text and facets searched in every step file of a run by the host, which streams the files (env/runs/rollout-search.ts). */
export const RolloutSearchRequest = request<RolloutSearchParams, RolloutSearchResult>('rollouts/search', (p): p is RolloutSearchParams =>
  hasFields(p, {
    runId: isString,
    query: (v) => isString(v) && v.length <= SEARCH_QUERY_MAX,
    filter: isRolloutFacets,
    limit: optional((v) => isNonNegativeInteger(v) && v >= 1 && v <= SEARCH_LIMIT_MAX),
    from: optional((v) => hasFields(v, { step: isNonNegativeInteger, line: isNonNegativeInteger })),
  }),
);

/**
 * A rollout image's file on disk (`images/REF.png` in the run), and, for the task's own image, the
 * task record with its bands (looked up by prompt id in the run's task files), for the playground.
 */
export const RunImageRequest = request<{ runId: string; ref: string; promptId: string | null }, { path: string; metadata: PlaygroundMetadata | null }>(
  'runs/image',
  (p): p is { runId: string; ref: string; promptId: string | null } => hasFields(p, { runId: isString, ref: isString, promptId: (v) => v === null || isString(v) }),
);

/** The evaluations of a run that kept every task's rollout (env/runs/eval-sets.ts). */
export const EvalSetsRequest = request<{ runId: string }, { runId: string; sets: EvalSetInfo[] }>('evals/list', (p): p is { runId: string } => hasFields(p, { runId: isString }));

const isEvalSide = (v: unknown): v is EvalSide => hasFields(v, { runId: isString, key: isString, arm: (a) => EVAL_ARMS.includes(a as EvalArm) });

/** Two evaluations side by side, task by task: which tasks b fixed, broke, or both got wrong (or right), with the counts. */
export const EvalCompareRequest = request<{ a: EvalSide; b: EvalSide }, EvalComparison>('evals/compare', (p): p is { a: EvalSide; b: EvalSide } =>
  hasFields(p, { a: isEvalSide, b: isEvalSide }),
);

/** One record of an evaluation, by line. */
export const EvalRecordRequest = request<{ runId: string; key: string; line: number }, { runId: string; key: string; line: number; record: RolloutRecord } & InferredWeights>(
  'evals/record',
  (p): p is { runId: string; key: string; line: number } => hasFields(p, { runId: isString, key: isString, line: isNonNegativeInteger }),
);

/** Most characters of a prompt id a timeline may ask for. */
export const PROMPT_ID_MAX = 300;

/** Every training step and evaluation of a run where one task (by prompt id) appeared, with its reward, answer and tool calls. */
export const TaskTimelineRequest = request<{ runId: string; promptId: string }, TaskTimeline>('rollouts/timeline', (p): p is { runId: string; promptId: string } =>
  hasFields(p, { runId: isString, promptId: (v) => isString(v) && v.length > 0 && v.length <= PROMPT_ID_MAX }),
);

/** Tags and comments on rollouts, in the run's annotations.jsonl (env/runs/annotations.ts; schemas/annotation.schema.json). */
export const AnnotationsListRequest = request<{ runId: string }, { runId: string; annotations: Annotation[]; problems: string[] }>('annotations/list', (p): p is { runId: string } =>
  hasFields(p, { runId: isString }),
);

const isTarget = (v: unknown): v is AnnotationTarget =>
  hasFields(v, {
    kind: (k) => k === 'step' || k === 'eval',
    step: optional((s) => s === null || isNonNegativeInteger(s)),
    key: optional(isString),
    line: isNonNegativeInteger,
    prompt_id: isString,
  });

export interface AnnotationSaveParams {
  runId: string;
  /** The annotation to replace; absent: a new one. */
  id?: string;
  target: AnnotationTarget;
  tags: string[];
  comment: string;
}

/** Saves an annotation (appends it to annotations.jsonl; the host validates it against the schema). Not available in a bundle. */
export const AnnotationSaveRequest = request<AnnotationSaveParams, { runId: string; annotation: Annotation }>('annotations/save', (p): p is AnnotationSaveParams =>
  hasFields(p, { runId: isString, id: optional(isString), target: isTarget, tags: isStringArray, comment: isString }),
);

/** Removes an annotation (appends its removal). */
export const AnnotationDeleteRequest = request<{ runId: string; id: string }, { runId: string; id: string; deleted: true }>('annotations/delete', (p): p is { runId: string; id: string } =>
  hasFields(p, { runId: isString, id: isString }),
);

/** A run's config.json as read by the host (env/runs/run-config.ts): the object, or null with why there is none. */
export interface RunConfigEntry {
  runId: string;
  config: Record<string, unknown> | null;
  problem: string | null;
}

/** Most runs one runs/configs request may name. */
export const MAX_CONFIG_RUNS = 64;

/** The configs of the runs a dashboard compares, for its config diff. */
export const RunConfigsRequest = request<{ runIds: string[] }, { configs: RunConfigEntry[] }>('runs/configs', (p): p is { runIds: string[] } =>
  hasFields(p, { runIds: (v) => isStringArray(v) && v.length >= 1 && v.length <= MAX_CONFIG_RUNS }),
);

export const ToolsListRequest = request<Record<string, never>, { tools: ToolInfo[] }>('tools/list', empty);

/** An image to open: uploaded bytes (base64) with a file name, or a path on the host inside an allowed root. */
export type PlaygroundSource = { name: string; base64: string } | { path: string };

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

export interface PlaygroundMetadata {
  name: string;
  text: string;
  source?: string;
}

const isPlaygroundMetadata = (m: unknown): m is PlaygroundMetadata => hasFields(m, { name: isString, text: isString, source: optional(isString) });

function isSource(value: unknown): value is PlaygroundSource {
  return hasFields(value, { name: isString, base64: isString }) || hasFields(value, { path: isString });
}

function isCall(value: unknown): value is PlaygroundCall {
  return hasFields(value, { name: isString, arguments: isRecord });
}

const isReplay = (v: unknown): v is PlaygroundCall[] => Array.isArray(v) && v.length <= MAX_REPLAYED_CALLS && v.every(isCall);

export const PlaygroundOpenRequest = request<PlaygroundOpenParams, PlaygroundSnapshot>('playground/open', (p): p is PlaygroundOpenParams =>
  hasFields(p, { session: isString, image: isSource, metadata: optional(isPlaygroundMetadata), calls: optional(isReplay) }),
);

export const PlaygroundApplyRequest = request<{ session: string; call: PlaygroundCall }, PlaygroundSnapshot>('playground/apply', (p): p is { session: string; call: PlaygroundCall } =>
  hasFields(p, { session: isString, call: isCall }),
);

export const PlaygroundUndoRequest = request<{ session: string }, PlaygroundSnapshot>('playground/undo', (p): p is { session: string } =>
  hasFields(p, { session: isString }),
);

export const PlaygroundSnapshotRequest = request<{ session: string }, PlaygroundSnapshot>('playground/snapshot', (p): p is { session: string } =>
  hasFields(p, { session: isString }),
);

const CALL_FORMATS: readonly CallFormat[] = ['json', 'hermes', 'openthinkimg', 'refocus'];

export const FormatCallRequest = request<{ calls: PlaygroundCall[]; format: CallFormat }, { text: string }>('calls/format', (p): p is { calls: PlaygroundCall[]; format: CallFormat } =>
  hasFields(p, { calls: (v) => Array.isArray(v) && v.every(isCall), format: (v) => CALL_FORMATS.includes(v as CallFormat) }),
);

// ---------------------------------------------------------------------------------------------
// Notifications (host → panel)

/** Every run's summary, sent on ready and whenever any run directory changes. */
export const RunsChangedNotification = notification<{ runs: RunSummary[] }>('runs/didChange', (p): p is { runs: RunSummary[] } =>
  hasFields(p, { runs: Array.isArray }),
);

/** The host opened an image in the playground (VS Code: explorer context menu). */
export const PlaygroundOpenedNotification = notification<{ snapshot: PlaygroundSnapshot }>('playground/didOpen', (p): p is { snapshot: PlaygroundSnapshot } =>
  hasFields(p, { snapshot: isRecord }),
);

/**
 * Show a run's step (VS Code: the extension's answer to a dashboard's viewer/show, sent once the
 * viewer is ready). In a browser the viewer page takes the same from its URL: `viewer?run=ID&step=N`.
 */
export const ViewerShowStepNotification = notification<{ runId: string; step: number }>('viewer/showStep', (p): p is { runId: string; step: number } =>
  hasFields(p, { runId: isString, step: isNonNegativeInteger }),
);

/** Every request type, for hosts that dispatch by method. */
export const REQUESTS = [
  RunsListRequest,
  MetricRowsRequest,
  MetricSeriesRequest,
  RolloutStepsRequest,
  RolloutIndexRequest,
  RolloutRecordRequest,
  RolloutSearchRequest,
  RunImageRequest,
  RunConfigsRequest,
  EvalSetsRequest,
  EvalCompareRequest,
  EvalRecordRequest,
  TaskTimelineRequest,
  AnnotationsListRequest,
  AnnotationSaveRequest,
  AnnotationDeleteRequest,
  ToolsListRequest,
  PlaygroundOpenRequest,
  PlaygroundApplyRequest,
  PlaygroundUndoRequest,
  PlaygroundSnapshotRequest,
  FormatCallRequest,
] as const;

export const COMMANDS = [ReadyCommand, ErrorCommand, SaveFileCommand, ShowInPlaygroundCommand, ShowInViewerCommand, ShowReportCommand, CancelRequestCommand] as const;

/** What the page tells the panel about its host, as JSON in <script type="application/json" id="vistool-config">. */
export interface PageConfig {
  panel: PanelKind;
  /** browser: `vistool view`; vscode: a webview; bundle: a static copy read from its own data files (`vistool view --bundle`). */
  transport: 'browser' | 'vscode' | 'bundle';
  /** Browser host: the access token (also held in a cookie), sent with every request. */
  token?: string;
  /** VS Code host: a webview URI per run id under which the run directory's files are reachable. */
  resourceBases?: Record<string, string>;
}
