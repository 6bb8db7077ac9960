/**
 * "Replay without the tool's result" on a training rollout: the host replays the episode up to and
 * including its first successful call, shows the policy that call's unedited input image with the
 * same observation text, and lets the served policy go on greedily (protocol/panel/replay.ts); this
 * shows the button and what came back beside the recorded answer — the answer, whether it changed,
 * whether it is right. An evaluation's records carry their replay already (findings-view.ts'
 * counterfactualView), so they get no button.
 *
 * The button is there whenever a replay would mean something (a successful call to withhold) and
 * disabled, saying why, where the host cannot replay: a static bundle, no policy configured.
 *
 * The answer is the model's text: it goes into the page as text through `h`, never as markup.
 */
import type { ReplayAvailability, WithheldReplayResult } from '../../protocol/panel/replay.js';
import type { RolloutRecord } from '../../protocol/rollout-record.js';
import { counterfactualOf } from '../../protocol/findings.js';
import { button, h, replaceChildren } from '../shared/dom.js';

export interface ReplayControl {
  availability: ReplayAvailability;
  /** A replay already asked for this rollout in this page, shown again when the rollout is. */
  previous(): WithheldReplayResult | undefined;
  run(): Promise<WithheldReplayResult>;
}

/** Whether the record is one a replay applies to: a training rollout, not replayed yet, with a successful call. */
export function replayable(record: RolloutRecord): boolean {
  if (record.arm !== undefined || counterfactualOf(record) !== null) return false;
  return record.turns.some((turn) => turn.role === 'assistant' && turn.calls.some((call) => call.ok));
}

function resultView(result: WithheldReplayResult): HTMLElement {
  const { replay } = result;
  return h('div', { class: 'counterfactual replayed', 'data-testid': 'withheld-replay', 'data-changed': String(replay.changed), 'data-correct': String(replay.correct), title: `Replayed against ${result.policy}: the recorded turns up to the first successful call, that call's result withheld (the unedited image, the same text), then greedy` },
    h('span', { class: 'muted' }, 'without the tool\'s result '),
    h('strong', { 'data-testid': 'withheld-replay-answer' }, replay.answer ?? '(no answer)'),
    ' ',
    h('span', { class: `cf-change ${replay.changed ? 'changed' : 'unchanged'}`, 'data-testid': 'withheld-replay-changed' },
      h('span', { class: `codicon codicon-${replay.changed ? 'diff' : 'circle-slash'}`, 'aria-hidden': 'true' }), replay.changed ? ' changed' : ' unchanged'),
    h('span', { class: 'muted' }, ' vs the recorded '),
    h('span', { 'data-testid': 'withheld-replay-recorded' }, result.recordedAnswer ?? '(no answer)'),
    ' ',
    h('span', { class: replay.correct ? 'good' : 'bad', 'data-testid': 'withheld-replay-correct' },
      h('span', { class: `codicon codicon-${replay.correct ? 'pass' : 'error'}`, 'aria-hidden': 'true' }), replay.correct ? ' correct' : ' incorrect'),
    h('div', { class: 'muted replay-facts' },
      `${result.policy}: ${result.forcedTurns} recorded turn${result.forcedTurns === 1 ? '' : 's'} sent as written, ${result.turns} in all, ${result.requests} request${result.requests === 1 ? '' : 's'}, ${result.seconds.toFixed(1)} s`),
    result.openingMatches === false
      ? h('div', { class: 'bad', 'data-testid': 'withheld-replay-opening' }, 'The replay opened with other messages than the recorded episode (the run\'s config or task file changed since): it answered another prompt.')
      : null,
  );
}

/** The button and, once asked, the replay's outcome; null when the record is not one to replay. */
export function withheldReplaySection(record: RolloutRecord, control: ReplayControl | undefined): HTMLElement | null {
  if (control === undefined || !replayable(record)) return null;
  const outcome = h('div', { class: 'replay-outcome', 'aria-live': 'polite' });
  const section = h('div', { class: 'withheld-replay', 'data-testid': 'withheld-replay-section' });
  const { availability } = control;
  const label = 'Replay without the tool\'s result';
  if (!availability.available) {
    const reason = availability.reason ?? 'this host cannot replay rollouts';
    const disabled = button(label, () => {}, { icon: 'debug-restart', secondary: true, testid: 'withheld-replay-button', title: reason });
    disabled.setAttribute('disabled', '');
    disabled.setAttribute('aria-disabled', 'true');
    // A disabled control shows no tooltip in every browser: the reason is on the page too.
    replaceChildren(section, h('span', { title: reason }, disabled), ' ', h('span', { class: 'muted replay-unavailable', 'data-testid': 'withheld-replay-unavailable' }, reason));
    return section;
  }
  const go = button(label, () => void start(), {
    icon: 'debug-restart',
    secondary: true,
    testid: 'withheld-replay-button',
    title: `Replay this episode with its first successful call's result withheld (the call stands; the observation carries the unedited image and the same text) and let ${availability.policy ?? 'the policy'} go on greedily`,
  });
  const start = async () => {
    go.setAttribute('disabled', '');
    replaceChildren(outcome, h('span', { class: 'muted', 'data-testid': 'withheld-replay-running' }, `replaying against ${availability.policy ?? 'the policy'}…`));
    try {
      replaceChildren(outcome, resultView(await control.run()));
    } catch (err) {
      replaceChildren(outcome, h('div', { class: 'bad', role: 'alert', 'data-testid': 'withheld-replay-error' }, `The replay failed: ${(err as Error).message}`));
    } finally {
      go.removeAttribute('disabled');
    }
  };
  const previous = control.previous();
  if (previous) replaceChildren(outcome, resultView(previous));
  replaceChildren(section, go, outcome);
  return section;
}
