/**
 * Tool calls written out as a policy would write them (the playground's "copy as" formats).
 *
 * Types, method names and guards only: no behaviour, no DOM, no Node.
 */
import { hasFields } from '../guards.js';
import { request } from './messages.js';
import { isCall, type PlaygroundCall } from './playground.js';

export type CallFormat = 'json' | 'hermes' | 'openthinkimg' | 'refocus';

const CALL_FORMATS: readonly CallFormat[] = ['json', 'hermes', 'openthinkimg', 'refocus'];

export const FormatCallRequest = request<{ calls: PlaygroundCall[]; format: CallFormat }, { text: string }>()('calls/format', (p): p is { calls: PlaygroundCall[]; format: CallFormat } =>
  hasFields(p, { calls: (v) => Array.isArray(v) && v.every(isCall), format: (v) => CALL_FORMATS.includes(v as CallFormat) }),
);
