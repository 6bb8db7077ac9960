/**
 * The viewer's search across every step of a run: text (in questions, answers and turns) and the
 * list's facets (outcome, tool use, error class, tool name), answered by the host
 * (`rollouts/search`, which streams the step files). It shows how many rollouts match in each
 * step and the first matches with a snippet; choosing one opens that step at that rollout and
 * turn. Snippets are model text: they are only ever set as text.
 */
import type { PanelHost } from '../shared/host.js';
import { type RolloutSearchMatch, RolloutSearchRequest, type RolloutSearchResult } from '../../protocol/panel-protocol.js';
import { describeFacets, type RolloutFacets } from '../../protocol/rollout-filter.js';
import { button, h, replaceChildren } from '../shared/dom.js';

export interface RunSearchOptions {
  /** The text the box starts with (saved UI state), and where a search's text is handed to be saved. */
  query: string;
  queried(query: string): void;
  runId(): string | null;
  facets(): RolloutFacets;
  /** Opens `step` at the rollout on `line` (its first match when null), showing turn `turn`; `facets` are the search's own. */
  jump(step: number, line: number | null, turn: number | null, facets: RolloutFacets): void;
  /** Told of each answer, and of null when the results are cleared. */
  answered?(result: RolloutSearchResult | null): void;
}

function where(match: RolloutSearchMatch): string {
  if (match.field !== 'turn') return match.field;
  return `turn ${(match.turn ?? 0) + 1}${match.role ? ` (${match.role})` : ''}`;
}

/** The snippet as three text pieces, the found text in a <mark>. */
function snippet(match: RolloutSearchMatch): HTMLElement {
  const { snippet: text, start, end } = match;
  return h('span', { class: 'search-snippet', 'data-testid': 'run-search-snippet' }, text.slice(0, start), end > start ? h('mark', null, text.slice(start, end)) : null, text.slice(end));
}

export class RunSearch {
  readonly element: HTMLElement;
  private readonly query = h('vscode-textfield', { placeholder: 'Search all steps', 'aria-label': 'Search all steps: questions, answers and turns', 'data-testid': 'run-search-query' }) as HTMLElement & { value: string };
  private readonly summary = h('div', { class: 'run-search-summary muted', role: 'status', 'data-testid': 'run-search-summary' });
  private readonly results = h('div', { class: 'run-search-results', 'data-testid': 'run-search-results' });
  private token = 0;
  /** The search being answered: a new one or a clear cancels it, and the host stops reading step files for it. */
  private inFlight: AbortController | null = null;
  /** The text and facets the matches listed were found with, the matches listed, and where the list starts. */
  private asked: { query: string; filter: RolloutFacets } | null = null;
  private listed: RolloutSearchMatch[] = [];
  private listFrom = { step: 0, line: 0 };

  constructor(
    private readonly host: PanelHost,
    private readonly options: RunSearchOptions,
  ) {
    this.query.value = options.query;
    this.query.addEventListener('keydown', (event) => {
      if ((event as KeyboardEvent).key === 'Enter') void this.run();
    });
    this.element = h(
      'section',
      { class: 'run-search', 'aria-label': 'Search all steps', 'data-testid': 'run-search' },
      h('div', { class: 'run-search-bar' },
        this.query,
        button('All steps', () => void this.run(), { icon: 'search', secondary: true, title: 'Search every step of the run, with the list’s outcome, tools, error and tool filters', testid: 'run-search-go' }),
        button('', () => this.clear(), { icon: 'close', secondary: true, title: 'Clear the search across steps', testid: 'run-search-clear' }),
      ),
      this.summary,
      this.results,
    );
  }

  /** Forgets the results (another run was opened). */
  clear(): void {
    this.token += 1;
    this.cancel();
    this.summary.textContent = '';
    replaceChildren(this.results);
    delete this.element.dataset.state;
    this.options.answered?.(null);
  }

  private cancel(): void {
    this.inFlight?.abort();
    this.inFlight = null;
  }

  /** Searches what the box says, with the list's facets, and lists the first matches. */
  async run(): Promise<void> {
    const query = this.query.value.trim();
    const filter = this.options.facets();
    this.options.queried(query);
    await this.load({ query, filter }, null, 'replace');
  }

  /**
   * Asks the host (the counts are always the whole run's) and lists the matches from `from` on:
   * in place of the list, or after it (the next page).
   */
  private async load(asked: { query: string; filter: RolloutFacets }, from: { step: number; line: number } | null, mode: 'replace' | 'append'): Promise<boolean> {
    const runId = this.options.runId();
    if (runId === null) return false;
    const token = ++this.token;
    this.cancel();
    const inFlight = new AbortController();
    this.inFlight = inFlight;
    this.element.dataset.state = 'searching';
    this.summary.textContent = 'Searching every step…';
    if (mode === 'replace') replaceChildren(this.results);
    try {
      const result = await this.host.request(RolloutSearchRequest, { runId, ...asked, ...(from ? { from } : {}) }, inFlight.signal);
      if (this.inFlight === inFlight) this.inFlight = null;
      if (token !== this.token) return false;
      this.asked = asked;
      if (mode === 'replace') {
        this.listed = result.matches;
        this.listFrom = result.from;
      } else this.listed = [...this.listed, ...result.matches];
      this.show(result);
      this.options.answered?.(result);
      return true;
    } catch (err) {
      if (this.inFlight === inFlight) this.inFlight = null;
      if (token !== this.token) return false;
      this.element.dataset.state = 'failed';
      this.summary.textContent = `The search failed: ${(err as Error).message}`;
      return false;
    }
  }

  /** A step's count opens its first match: one listed, or else the step's own matches, asked for. */
  private async openStep(step: number, filter: RolloutFacets): Promise<void> {
    let first = this.listed.find((m) => m.step === step);
    if (!first && this.asked && (await this.load(this.asked, { step, line: 0 }, 'replace'))) first = this.listed.find((m) => m.step === step);
    this.options.jump(step, first?.line ?? null, first?.turn ?? null, filter);
  }

  /** The match last opened, marked so the list says where the viewer is. */
  private markCurrent(chosen: HTMLElement): void {
    this.results.querySelectorAll('[aria-current]').forEach((element) => element.removeAttribute('aria-current'));
    chosen.setAttribute('aria-current', 'true');
  }

  private show(result: RolloutSearchResult): void {
    const facets = describeFacets(result.filter);
    const what = [result.query !== '' ? `“${result.query}”` : null, facets || null].filter(Boolean).join(' · ') || 'everything';
    const skipped = result.scanned.skipped ? ` · ${result.scanned.skipped} unreadable line(s) skipped` : '';
    const fromStart = this.listFrom.step === 0 && this.listFrom.line === 0;
    const listing = fromStart ? (result.capped ? ` · the first ${this.listed.length} are listed` : '') : ` · ${this.listed.length} listed from step ${this.listFrom.step}${result.capped ? ', more after' : ''}`;
    this.summary.textContent = `${result.total} of ${result.scanned.rollouts} rollouts in ${result.steps.length} of ${result.scanned.steps} steps match ${what}${listing}${skipped}`;
    this.element.dataset.state = 'done';
    this.element.dataset.answers = String(Number(this.element.dataset.answers ?? 0) + 1);
    this.element.dataset.total = String(result.total);
    this.element.dataset.capped = String(result.capped);
    const steps = h('div', { class: 'run-search-steps', role: 'group', 'aria-label': 'matches per step' },
      ...result.steps.map(({ step, matches }) =>
        h('button', { type: 'button', class: 'run-search-step', 'data-testid': 'run-search-step', 'data-step': step, 'data-matches': matches, title: `open step ${step} at its first match`, onclick: () => void this.openStep(step, result.filter) }, `step ${step}: ${matches}`),
      ),
    );
    const list = h('ol', { class: 'run-search-matches', 'aria-label': 'matches' },
      ...this.listed.map((match) =>
        h('li', null,
          h('button', { type: 'button', class: 'run-search-match', 'data-testid': 'run-search-match', 'data-step': match.step, 'data-line': match.line, onclick: (event) => {
            this.markCurrent(event.currentTarget as HTMLElement);
            this.options.jump(match.step, match.line, match.turn, result.filter);
          } },
            h('span', { class: 'run-search-where muted' }, `step ${match.step} · line ${match.line + 1} · `, h('span', { class: 'run-search-prompt' }, match.promptId), ` · ${where(match)}`),
            snippet(match),
          ),
        ),
      ),
    );
    const last = this.listed[this.listed.length - 1];
    const more = result.capped && last && this.asked
      ? button(`More matches after step ${last.step}, line ${last.line + 1}`, () => void this.load(this.asked!, { step: last.step, line: last.line + 1 }, 'append'), { secondary: true, testid: 'run-search-more' })
      : null;
    replaceChildren(this.results, result.total > 0 ? steps : null, this.listed.length > 0 ? list : null, more);
  }
}
