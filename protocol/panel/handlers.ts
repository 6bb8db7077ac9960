/**
 * Every request and command of the panel protocol in one list each, and the tables a host fills
 * to answer them: `RequestHandlers` maps each request's method to a function from that request's
 * params to its response, and `CommandHandlers` each command's method to a function of its params.
 * A host is a value of these types, so a request one host lacks, or answers with the wrong shape,
 * is a compile error rather than something a user finds. `dispatch()` and `dispatchCommand()` check
 * a message's method and params, then call the one handler.
 *
 * Pure: no DOM, no Node.
 */
import type { CommandMessage, CommandParams, RequestMessage, RequestParams, RequestResult } from './messages.js';
import { AnnotationDeleteRequest, AnnotationSaveRequest, AnnotationsListRequest } from './annotations.js';
import { FormatCallRequest } from './calls.js';
import { EvalCompareRequest, EvalRecordRequest, EvalSetsRequest, EvalSummaryRequest, TaskTimelineRequest } from './evaluations.js';
import { MetricRowsRequest, MetricSeriesRequest } from './metrics.js';
import { CancelRequestCommand, ErrorCommand, ReadyCommand, SaveFileCommand } from './panels.js';
import { PlaygroundApplyRequest, PlaygroundOpenRequest, PlaygroundSnapshotRequest, PlaygroundUndoRequest, ShowInPlaygroundCommand, ToolsListRequest } from './playground.js';
import { ReplayAvailabilityRequest, WithheldReplayRequest } from './replay.js';
import { RolloutIndexRequest, RolloutRecordRequest, RolloutStepsRequest, ShowInViewerCommand } from './rollouts.js';
import { RunConfigsRequest, RunImageRequest, RunsListRequest, ShowReportCommand } from './runs.js';
import { RolloutSearchRequest } from './search.js';

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
  EvalSummaryRequest,
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
  ReplayAvailabilityRequest,
  WithheldReplayRequest,
] as const;

export const COMMANDS = [ReadyCommand, ErrorCommand, SaveFileCommand, ShowInPlaygroundCommand, ShowInViewerCommand, ShowReportCommand, CancelRequestCommand] as const;

export type PanelRequestType = (typeof REQUESTS)[number];
export type RequestMethod = PanelRequestType['method'];
export type RequestTypeOf<M extends RequestMethod> = Extract<PanelRequestType, { method: M }>;

export type PanelCommandType = (typeof COMMANDS)[number];
export type CommandMethod = PanelCommandType['method'];
export type CommandTypeOf<M extends CommandMethod> = Extract<PanelCommandType, { method: M }>;

/**
 * Answers one request: its params (already checked against the request's guard) and a signal
 * aborted when the panel no longer wants the answer. A handler that cannot answer throws an Error
 * whose message the panel shows.
 */
export type RequestHandler<T> = (params: RequestParams<T>, signal: AbortSignal) => RequestResult<T> | Promise<RequestResult<T>>;

/** One handler per request of the protocol: what a host is. */
export type RequestHandlers = { readonly [M in RequestMethod]: RequestHandler<RequestTypeOf<M>> };

export type CommandHandler<T> = (params: CommandParams<T>) => void | Promise<void>;

/** One handler per command of the protocol (a host that has nothing to do for one says why in its handler). */
export type CommandHandlers = { readonly [M in CommandMethod]: CommandHandler<CommandTypeOf<M>> };

function requestType(method: string): PanelRequestType | undefined {
  return REQUESTS.find((r) => r.method === method);
}

/**
 * Answers a request message with the handler for its method. Throws, with what is wrong, for an
 * unknown method or params that do not have the request's shape: nothing a panel sent runs
 * unchecked.
 */
export async function dispatch(handlers: RequestHandlers, message: RequestMessage, signal: AbortSignal = new AbortController().signal): Promise<unknown> {
  const type = requestType(message.method);
  if (!type) throw new Error(`unknown request '${message.method}'; known requests: ${REQUESTS.map((r) => r.method).join(', ')}`);
  if (!type.isParams(message.params)) throw new Error(`malformed params for request '${message.method}'`);
  const handler = handlers[type.method] as (params: unknown, signal: AbortSignal) => unknown;
  return handler(message.params, signal);
}

/**
 * Runs the handler for a command message. False, with nothing run, for an unknown method or
 * malformed params (a host logs it: a command has no answer to carry an error).
 */
export async function dispatchCommand(handlers: CommandHandlers, message: CommandMessage): Promise<boolean> {
  const type = COMMANDS.find((c) => c.method === message.method);
  if (!type || !type.isParams(message.params)) return false;
  const handler = handlers[type.method] as (params: unknown) => void | Promise<void>;
  await handler(message.params);
  return true;
}
