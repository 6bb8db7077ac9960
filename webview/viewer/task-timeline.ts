/**
 * "This task over time": every training step and evaluation of a run where one task (by prompt
 * id) appeared, with reward, answer, tool calls and errors, so one prompt can be followed through
 * training. A held-out task has no training rollouts: its timeline is its evaluations, one per
 * checkpoint and arm. The host reads the run's files (rollouts/timeline); a click on an entry
 * opens that rollout. Model text (answers) is only ever set as text.
 */
import type { PanelHost } from '../shared/host.js';
import { type TaskTimeline, TaskTimelineRequest, type TimelineEntry } from '../../protocol/panel-protocol.js';
import { button, formatNumber, h, replaceChildren } from '../shared/dom.js';
import { errorLegend } from '../../protocol/tool-use.js';

function answerText(answer: string | string[] | null): string {
  if (answer === null) return '–';
  return Array.isArray(answer) ? answer.join(' || ') : answer;
}

/** "12 of 20 correct (steps 3), 1/2 (evaluations)": what the timeline adds up to. */
export function timelineSummary(entries: readonly TimelineEntry[]): string {
  const part = (kind: TimelineEntry['kind'], words: string) => {
    const of = entries.filter((e) => e.kind === kind);
    if (of.length === 0) return null;
    const steps = new Set(of.map((e) => `${e.step}/${e.key ?? ''}`)).size;
    return `${words}: ${of.filter((e) => e.correct === true).length} of ${of.length} correct in ${steps} ${kind === 'step' ? `step${steps === 1 ? '' : 's'}` : `evaluation${steps === 1 ? '' : 's'}`}`;
  };
  return [part('step', 'training'), part('eval', 'held out')].filter((p) => p !== null).join(' · ') || 'this task appears in no step or evaluation of the run';
}

export class TaskTimelineView {
  readonly element = h('section', { class: 'task-timeline', 'aria-label': 'This task over time', 'data-testid': 'task-timeline', hidden: true });
  private token = 0;
  private abort: AbortController | null = null;

  constructor(
    private readonly host: PanelHost,
    private readonly open: (runId: string, promptId: string, entry: TimelineEntry) => void,
  ) {}

  hide(): void {
    this.abort?.abort();
    this.element.hidden = true;
    replaceChildren(this.element);
  }

  async show(runId: string, runName: string, promptId: string): Promise<void> {
    this.abort?.abort();
    const abort = new AbortController();
    this.abort = abort;
    const token = ++this.token;
    this.element.hidden = false;
    replaceChildren(this.element, this.heading(`${promptId} in ${runName}`), h('vscode-progress-ring', null));
    let timeline: TaskTimeline;
    try {
      timeline = await this.host.request(TaskTimelineRequest, { runId, promptId }, abort.signal);
    } catch (err) {
      if (token !== this.token || abort.signal.aborted) return;
      replaceChildren(this.element, this.heading(promptId), h('p', { class: 'muted' }, `Could not read the run: ${(err as Error).message}`));
      return;
    }
    if (token !== this.token) return;
    this.element.dataset.entries = String(timeline.entries.length);
    const rows = timeline.entries.map((entry) => {
      const where = entry.kind === 'step' ? `step ${entry.step}` : `${entry.label}${entry.step !== null ? ` · step ${entry.step}` : ''}`;
      const how = entry.kind === 'step' ? `rollout ${entry.group ?? '–'}` : entry.arm === 'no_tools' ? 'tools off' : 'tools on';
      const row = h(
        'tr',
        { class: 'timeline-row', 'data-testid': 'timeline-row', 'data-kind': entry.kind, 'data-step': String(entry.step ?? ''), tabindex: '0', title: 'Open this rollout' },
        h('td', null, entry.kind === 'step' ? 'train' : 'eval'),
        h('td', null, where),
        h('td', null, how),
        h('td', { class: entry.correct === true ? 'good' : entry.correct === false ? 'bad' : 'muted' }, entry.correct === true ? '✓' : entry.correct === false ? '✗' : '–'),
        h('td', { class: 'num' }, formatNumber(entry.reward)),
        h('td', { class: 'answer' }, answerText(entry.answer)),
        h('td', { title: entry.toolNames.join(', ') }, entry.toolCalls > 0 ? `${entry.toolCalls} · ${entry.toolNames.join(', ')}` : 'none'),
        h('td', { title: errorLegend(entry.errorClasses) }, entry.errorClasses.join(' ') || '–'),
      );
      const go = () => this.open(runId, promptId, entry);
      row.addEventListener('click', go);
      row.addEventListener('keydown', (event) => {
        if (event.key === 'Enter') go();
      });
      return row;
    });
    replaceChildren(
      this.element,
      this.heading(`${promptId} in ${runName}`),
      h('p', { class: 'muted' }, h('span', null, timeline.question), ' · gold ', h('strong', null, answerText(timeline.gold))),
      h('p', { 'data-testid': 'timeline-summary' }, timelineSummary(timeline.entries)),
      rows.length > 0
        ? h(
            'div',
            { class: 'table-scroll' },
            h('table', { class: 'timeline-table' }, h('thead', null, h('tr', null, ...['', 'where', 'how', 'ok', 'reward', 'answer', 'tool calls', 'errors'].map((c) => h('th', { scope: 'col' }, c)))), h('tbody', null, ...rows)),
          )
        : null,
      h('p', { class: 'muted' }, `${timeline.scanned.files} files read, ${timeline.scanned.rollouts} rollouts of this task${timeline.scanned.skipped ? `, ${timeline.scanned.skipped} unreadable lines` : ''}.`),
    );
  }

  private heading(text: string): HTMLElement {
    return h('header', { class: 'timeline-head' }, h('h2', null, 'This task over time: ', h('code', null, text)), button('', () => this.hide(), { icon: 'close', secondary: true, title: 'Close', testid: 'timeline-close' }));
  }
}
