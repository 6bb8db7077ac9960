/**
 * One rollout, rendered: the outcome (answer against gold, reward, advantage, why it ended; an
 * evaluated episode's answer with the tool's result withheld, or a training rollout's button to
 * replay it so (replay-view.ts); the scanners' findings), the
 * prompt the policy read (opening-prompt.ts), the reward breakdown, then every turn — the model's text with think/answer/tool_call spans styled,
 * each parsed call as pretty JSON with its target, its result or its error class and message, and the image
 * before and after the call side by side.
 *
 * Every string from the record (model text, questions, answers, arguments, error messages) goes
 * into the page as text through `h`, never as markup: a rollout cannot inject HTML or script.
 */
import type { ActionError, AssistantTurn, CallRecord, ObservationTurn, TokenViewTurn, Turn } from '../../protocol/rollout-record.js';
import type { PlaygroundCall, RolloutRecord } from '../../protocol/panel-protocol.js';
import { button, formatNumber, h } from '../shared/dom.js';
import { explainReward } from '../../protocol/reward-breakdown.js';
import { countToolUse, errorLegend, toolUseWords } from '../../protocol/tool-use.js';
import { ImageCompare, ZOOM_BASE_WIDTH } from '../shared/image-compare.js';
import { segmentModelText } from './model-text.js';
import { openingPrompt } from './opening-prompt.js';
import { tokenView } from './token-view.js';
import { counterfactualView, findingsLine, targetBadge } from './findings-view.js';
import { type ReplayControl, withheldReplaySection } from './replay-view.js';

export interface RolloutViewContext {
  imageUrl(ref: string): string;
  zoom: number;
  /**
   * Opens a rollout image in the tool playground (`taskImage`: the task's own, whose bands the task
   * record has), replaying `calls` on it when given (a logged call, after the calls before it).
   */
  openInPlayground(ref: string, taskImage: boolean, calls?: PlaygroundCall[]): void;
  /** Where the record's weights came from when it had none (the host inferred them: they reproduce its reward). */
  weightsFrom?: string;
  /** false in a static bundle: there is no playground to open an image in. */
  playground?: boolean;
  /** Replaying a training rollout without its tool's result (replay-view.ts); absent: no such button. */
  replay?: ReplayControl;
}

function playgroundButton(ref: string, taskImage: boolean, label: string, context: RolloutViewContext): HTMLElement | null {
  if (context.playground === false) return null;
  return button(label, () => context.openInPlayground(ref, taskImage), { icon: 'beaker', secondary: true, testid: 'open-in-playground', title: 'Open this image in the tool playground, to try tools on it' });
}

/**
 * A logged call again in the playground: the task image with its metadata, the episode's calls that
 * ran before it, then this one, so the playground shows what the model saw and what its call did,
 * and its form holds the call to change and apply again.
 */
function replayButton(taskImage: string, calls: PlaygroundCall[], context: RolloutViewContext): HTMLElement | null {
  if (context.playground === false) return null;
  const call = calls[calls.length - 1];
  return button('Replay in playground', () => context.openInPlayground(taskImage, true, calls), {
    icon: 'debug-restart',
    secondary: true,
    testid: 'replay-in-playground',
    title: `Open the task image in the tool playground and apply ${calls.length > 1 ? `the ${calls.length - 1} call(s) before this one, then ` : ''}${call?.name ?? 'this call'} with these arguments`,
  });
}

export interface RenderedRollout {
  element: HTMLElement;
  /** One element per turn, for [ and ] navigation. */
  turns: HTMLElement[];
  compares: ImageCompare[];
}

function answerText(answer: string | string[] | null | undefined): string {
  if (answer === null || answer === undefined) return '(no answer)';
  return Array.isArray(answer) ? answer.join(' || ') : answer;
}

function modelText(text: string): HTMLElement {
  const block = h('div', { class: 'model-text', 'data-testid': 'model-text' });
  for (const segment of segmentModelText(text)) {
    if (segment.kind === 'text') {
      block.append(h('span', { class: 'seg-text' }, segment.body));
      continue;
    }
    block.append(h('span', { class: `seg seg-${segment.kind}`, 'data-kind': segment.kind }, h('span', { class: 'seg-tag' }, segment.open), segment.body, segment.close ? h('span', { class: 'seg-tag' }, segment.close) : null));
  }
  return block;
}

function errorLine(error: ActionError): HTMLElement {
  return h('div', { class: 'call-error', 'data-error-class': error.class }, h('span', { class: 'error-class', title: errorLegend([error.class]) }, error.class), ' ', error.tool ? h('code', null, error.tool) : null, error.tool ? ': ' : '', error.message);
}

function callView(call: CallRecord, index: number, context: RolloutViewContext, compares: ImageCompare[], replay: { taskImage: string; calls: PlaygroundCall[] }): HTMLElement {
  const status = call.ok ? h('span', { class: 'call-ok' }, h('span', { class: 'codicon codicon-check', 'aria-hidden': 'true' }), ' ok') : h('span', { class: 'call-failed' }, h('span', { class: 'codicon codicon-error', 'aria-hidden': 'true' }), ' failed');
  const parts: (HTMLElement | null)[] = [
    h('div', { class: 'call-head' }, h('span', { class: 'muted' }, `call ${index + 1} `), h('code', { class: 'call-name' }, call.name), ' ', status, targetBadge(call.target)),
    h('pre', { class: 'call-args', 'data-testid': 'call-args' }, JSON.stringify(call.arguments, null, 2)),
    call.summary ? h('div', { class: 'call-summary' }, call.summary) : null,
    call.error ? errorLine(call.error) : null,
  ];
  if (call.image_in) {
    const compare = new ImageCompare(context.imageUrl(call.image_in), call.ok && call.image_out ? context.imageUrl(call.image_out) : null, { before: 'before', after: 'after' }, ZOOM_BASE_WIDTH);
    compare.setZoom(context.zoom);
    compares.push(compare);
    parts.push(compare.element);
    parts.push(h('div', { class: 'call-actions' }, replayButton(replay.taskImage, replay.calls, context), call.ok && call.image_out ? playgroundButton(call.image_out, false, 'After in playground', context) : null));
  }
  return h('div', { class: `call ${call.ok ? 'ok' : 'failed'}`, 'data-testid': 'call' }, ...parts);
}

/** The calls that ran before each call of a rollout, in order: what a replay of that call applies first. */
interface CallsSoFar {
  taskImage: string;
  ran: PlaygroundCall[];
}

function assistantTurn(turn: AssistantTurn, context: RolloutViewContext, compares: ImageCompare[], tokens: TokenViewTurn | undefined, soFar: CallsSoFar): HTMLElement[] {
  const calls = turn.calls.map((call, i) => {
    const logged = { name: call.name, arguments: call.arguments };
    const view = callView(call, i, context, compares, { taskImage: soFar.taskImage, calls: [...soFar.ran, logged] });
    // A failed call changed no image: the next call's replay leaves it out.
    if (call.ok) soFar.ran.push(logged);
    return view;
  });
  return [
    modelText(turn.text),
    tokens ? tokenView(tokens) : null,
    ...calls,
    // Parse errors (no call was recognised) live only in `errors`; tool errors are shown with their call.
    ...turn.errors.filter((e) => !turn.calls.some((c) => c.error && c.error.message === e.message)).map(errorLine),
    turn.answer !== null ? h('div', { class: 'turn-answer' }, h('span', { class: 'muted' }, 'answer: '), h('strong', null, answerText(turn.answer))) : null,
  ].filter((x): x is HTMLElement => x !== null);
}

function observationTurn(turn: ObservationTurn, context: RolloutViewContext): HTMLElement[] {
  return [
    h('pre', { class: 'observation-text' }, turn.text),
    ...(turn.images.length > 0 ? [h('div', { class: 'observation-images' }, ...turn.images.map((ref) => h('img', { src: context.imageUrl(ref), alt: 'image shown to the model', class: 'thumb', loading: 'lazy' })))] : []),
  ];
}

function valueBar(value: number, max: number): HTMLElement {
  const bar = h('span', { class: `bar ${value < 0 ? 'negative' : ''}` });
  bar.style.width = `${Math.round((Math.abs(value) / max) * 100)}%`;
  return bar;
}

/** Records without weights (older runs, other writers): each value alone. */
function valuesOnly(entries: [string, number][]): HTMLElement {
  const max = Math.max(1, ...entries.map(([, v]) => Math.abs(v)));
  return h(
    'table',
    { class: 'reward-breakdown', 'data-testid': 'reward-breakdown' },
    h('caption', null, 'reward breakdown ', h('span', { class: 'muted' }, '(this run did not record the weights)')),
    h('tbody', null, ...entries.map(([name, value]) => h('tr', null, h('th', { scope: 'row' }, name), h('td', { class: 'num' }, formatNumber(value)), h('td', { class: 'bar-cell' }, valueBar(value, max))))),
  );
}

/** The reward's arithmetic: weight × value per additive term, the modifiers in order, the total; checks apart. */
function breakdown(record: RolloutRecord, weightsFrom: string | undefined): HTMLElement | null {
  const values = record.reward_breakdown ?? {};
  const entries = Object.entries(values);
  if (entries.length === 0) return null;
  const explained = explainReward(values, record.reward_weights, record.reward ?? null);
  if (explained === null) return valuesOnly(entries);
  const max = Math.max(1e-9, ...explained.terms.map((t) => Math.abs(t.contribution)));
  const termRows = explained.terms.map((t) =>
    h('tr', { 'data-term': t.name, class: t.weight === 0 ? 'muted' : '' },
      h('th', { scope: 'row' }, t.name),
      h('td', { class: 'num' }, formatNumber(t.value)),
      h('td', { class: 'num muted' }, `× ${formatNumber(t.weight)}`),
      h('td', { class: 'num' }, `= ${formatNumber(t.contribution)}`),
      h('td', { class: 'bar-cell' }, valueBar(t.contribution, max))),
  );
  const sumRow = h('tr', { class: 'subtotal' }, h('th', { scope: 'row' }, 'sum'), h('td', { colspan: '3', class: 'num' }, formatNumber(explained.weightedSum)), h('td', null));
  const stepRows = explained.steps.map((step) =>
    h('tr', { 'data-step': step.name }, h('th', { scope: 'row' }, step.name), h('td', { colspan: '2' }, step.label), h('td', { class: 'num' }, step.after === null ? '?' : `= ${formatNumber(step.after)}`), h('td', null)),
  );
  const mismatch = explained.reproduces === false ? h('p', { class: 'bad', 'data-testid': 'reward-mismatch' }, 'These terms do not add up to the recorded reward: the writer used another formula.') : null;
  const totalRow = h('tr', { class: 'total' }, h('th', { scope: 'row' }, 'reward'), h('td', { colspan: '3', class: 'num', 'data-testid': 'reward-total' }, formatNumber(explained.reward)), h('td', null));
  const checks = explained.checks.length === 0
    ? null
    : h('details', { class: 'reward-checks', 'data-testid': 'reward-checks' },
        h('summary', null, `checks (${explained.checks.length}), not added to the reward`),
        h('ul', null, ...explained.checks.map((c) =>
          h('li', { title: c.meaning ?? '', 'data-check': c.name },
            h('code', null, c.name), ` ${formatNumber(c.value)}`,
            c.agreesWithAccuracy === undefined ? null : h('span', { class: 'muted' }, c.agreesWithAccuracy ? ' (the same as accuracy)' : ' (differs from accuracy: a judge or a format rule changed it)'),
            c.meaning === null ? null : h('span', { class: 'muted' }, ` — ${c.meaning}`)))));
  return h(
    'div',
    { class: 'reward-explained' },
    h('table', { class: 'reward-breakdown', 'data-testid': 'reward-breakdown' },
      h('caption', null, 'reward breakdown', weightsFrom ? h('span', { class: 'muted', 'data-testid': 'weights-from' }, ` (weights from ${weightsFrom}: the record has none, and they reproduce its reward)`) : null),
      h('thead', null, h('tr', null, h('th', { scope: 'col' }, 'term'), h('th', { scope: 'col' }, 'value'), h('th', { scope: 'col' }, 'weight'), h('th', { scope: 'col' }, 'adds'), h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, 'share')))),
      h('tbody', null, ...termRows, sumRow, ...stepRows, totalRow)),
    mismatch,
    checks,
  );
}

export function renderRollout(record: RolloutRecord, context: RolloutViewContext): RenderedRollout {
  const compares: ImageCompare[] = [];
  const correct = record.correct === true ? h('span', { class: 'good' }, h('span', { class: 'codicon codicon-pass', 'aria-hidden': 'true' }), ' correct') : record.correct === false ? h('span', { class: 'bad' }, h('span', { class: 'codicon codicon-error', 'aria-hidden': 'true' }), ' incorrect') : h('span', { class: 'muted' }, 'unscored');
  const summary = h(
    'div',
    { class: 'rollout-summary' },
    h('div', { class: 'question' }, h('span', { class: 'muted' }, 'question: '), record.task.question),
    h('div', { class: 'outcome' },
      h('span', null, h('span', { class: 'muted' }, 'answer '), h('strong', { 'data-testid': 'rollout-answer' }, answerText(record.answer))),
      h('span', null, h('span', { class: 'muted' }, 'gold '), h('strong', null, answerText(record.task.answer))),
      correct,
      h('span', null, h('span', { class: 'muted' }, 'reward '), formatNumber(record.reward ?? null)),
      h('span', null, h('span', { class: 'muted' }, 'advantage '), formatNumber(record.advantage ?? null)),
      h('span', null, h('span', { class: 'muted' }, 'ended by '), record.end_reason ?? '–'),
      h('span', { 'data-testid': 'rollout-tool-use' }, h('span', { class: 'muted' }, 'tools '), toolUseWords(countToolUse(record.turns))),
    ),
    counterfactualView(record),
    withheldReplaySection(record, context.replay),
    findingsLine(record.findings),
  );
  const taskImage = h('figure', { class: 'task-image' }, h('figcaption', null, 'task image'), h('img', { src: context.imageUrl(record.task.image), alt: 'the task image', class: 'thumb', loading: 'lazy' }), playgroundButton(record.task.image, true, 'Open in playground', context));
  const soFar: CallsSoFar = { taskImage: record.task.image, ran: [] };
  const turns = record.turns.map((turn: Turn, index: number) =>
    h(
      'section',
      { class: `turn turn-${turn.role}`, 'data-testid': 'turn', 'data-turn': index, tabindex: '-1' },
      h('header', { class: 'turn-head' }, h('span', { class: 'turn-index' }, `turn ${index + 1}`), h('span', { class: 'turn-role' }, turn.role)),
      ...(turn.role === 'assistant' ? assistantTurn(turn, context, compares, record.token_view?.find((t) => t.turn === index), soFar) : observationTurn(turn, context)),
    ),
  );
  const element = h('article', { class: 'rollout', 'data-testid': 'rollout', 'data-prompt': record.prompt_id }, summary, openingPrompt(record, context.imageUrl), h('div', { class: 'rollout-top' }, taskImage, breakdown(record, context.weightsFrom)), h('div', { class: 'turns' }, ...turns));
  return { element, turns, compares };
}
