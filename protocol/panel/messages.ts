/**
 * The envelopes of the panel protocol and the three kinds of message type, in the GitLens style:
 * commands (panel → host, no answer), requests (panel → host, one typed response), notifications
 * (host → panel). Each capability's module (runs.ts, metrics.ts, rollouts.ts, …) declares its
 * message types with the constructors here; handlers.ts gathers them into the tables a host fills.
 *
 * Every type has an `is()` guard that checks the envelope and the shape of the params, because a
 * host must not trust what a panel sends. Method names are namespaced (`metrics/rows`) and are
 * literal types, so a handler table can be keyed by them.
 *
 * Types, method names and guards only: no behaviour, no DOM, no Node.
 */
import { isRecord, isString } from '../guards.js';

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

export type ParamsCheck<P> = (params: unknown) => params is P;

export interface CommandType<P, M extends string = string> {
  readonly kind: 'command';
  readonly method: M;
  readonly isParams: ParamsCheck<P>;
  is(message: unknown): message is CommandMessage<P>;
}

export interface RequestType<P, R, M extends string = string> {
  readonly kind: 'request';
  readonly method: M;
  readonly isParams: ParamsCheck<P>;
  is(message: unknown): message is RequestMessage<P>;
  /** Never set: carries the response type for `RequestResult<typeof X>`. */
  readonly _result?: R;
}

export interface NotificationType<P, M extends string = string> {
  readonly kind: 'notification';
  readonly method: M;
  readonly isParams: ParamsCheck<P>;
  is(message: unknown): message is NotificationMessage<P>;
}

export type RequestParams<T> = T extends RequestType<infer P, unknown, string> ? P : never;
export type RequestResult<T> = T extends RequestType<unknown, infer R, string> ? R : never;
export type CommandParams<T> = T extends CommandType<infer P, string> ? P : never;

function envelope(message: unknown, kind: string, method: string): message is Record<string, unknown> {
  return isRecord(message) && message.kind === kind && message.method === method && (kind === 'notification' || isString(message.id));
}

/**
 * The constructors take the params and result types first and the method second
 * (`request<P, R>()('metrics/rows', isParams)`), so the method is inferred as a literal type.
 */
export function command<P>() {
  return <M extends string>(method: M, isParams: ParamsCheck<P>): CommandType<P, M> => ({
    kind: 'command',
    method,
    isParams,
    is: (m): m is CommandMessage<P> => envelope(m, 'command', method) && isParams(m.params),
  });
}

export function request<P, R>() {
  return <M extends string>(method: M, isParams: ParamsCheck<P>): RequestType<P, R, M> => ({
    kind: 'request',
    method,
    isParams,
    is: (m): m is RequestMessage<P> => envelope(m, 'request', method) && isParams(m.params),
  });
}

export function notification<P>() {
  return <M extends string>(method: M, isParams: ParamsCheck<P>): NotificationType<P, M> => ({
    kind: 'notification',
    method,
    isParams,
    is: (m): m is NotificationMessage<P> => envelope(m, 'notification', method) && isParams(m.params),
  });
}

/** Params of a request that takes none. */
export const isEmpty = (p: unknown): p is Record<string, never> => isRecord(p);

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
