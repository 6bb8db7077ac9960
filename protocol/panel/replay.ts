/**
 * Replaying a training rollout with its tool results withheld, on demand, from the rollout viewer:
 * the same conversation up to and including the first successful call, the call run as it was, its
 * observation carrying the unedited image and the same text, then the served policy going on
 * greedily (docs/CONTRACTS.md, Counterfactual replay). An evaluation's records carry their replay
 * already (`vistool eval --counterfactual`); a training step's do not, so the viewer asks the host.
 *
 * The replay calls a policy, so it runs where Node is (`vistool view`, the VS Code host), against
 * the policy endpoint the person configured there; a static bundle has neither and says so.
 *
 * Types, method names and guards only: no behaviour, no DOM, no Node.
 */
import { hasFields, isNonNegativeInteger, isString } from '../guards.js';
import { isEmpty, request } from './messages.js';

/** Whether this host can replay, and with what; `reason` says why not (shown beside the disabled button). */
export interface ReplayAvailability {
  available: boolean;
  /** The policy a replay asks, as the person configured it (`openai:<base_url>#<model>`, no key); null when none. */
  policy: string | null;
  reason: string | null;
}

export const ReplayAvailabilityRequest = request<Record<string, never>, ReplayAvailability>()(
  'replay/availability',
  isEmpty,
);

export interface WithheldReplayParams {
  runId: string;
  step: number;
  line: number;
}

export interface WithheldReplayResult {
  runId: string;
  step: number;
  line: number;
  policy: string;
  /** The recorded episode's answer as text (a list joined with ' || '); null: it gave none. */
  recordedAnswer: string | null;
  /** The replay: its answer, right by the run's relaxed rule, and whether it differs from the recorded one once normalised. */
  replay: { answer: string | null; correct: boolean; changed: boolean };
  /** Assistant turns sent as recorded (up to and including the first successful call). */
  forcedTurns: number;
  /** Assistant turns in the replay, forced ones included. */
  turns: number;
  /**
   * Whether the replay opened with exactly the messages the recorded episode read (system turn,
   * question, image): false means the run's config or task file changed since, and the replay
   * answers another prompt; null when the record has no `opening` to compare.
   */
  openingMatches: boolean | null;
  requests: number;
  seconds: number;
}

export const WithheldReplayRequest = request<WithheldReplayParams, WithheldReplayResult>()(
  'replay/withheld',
  (p): p is WithheldReplayParams => hasFields(p, { runId: isString, step: isNonNegativeInteger, line: isNonNegativeInteger }),
);
