/**
 * Annotations in the rollout viewer: a rollout's tags and comments (shown with it, added, edited and
 * removed there), a mark on annotated rows, and the list's filter by tag. The host keeps them in
 * the run's annotations.jsonl (annotations/list, /save, /delete); a bundle carries them read-only.
 * Comments and tags are people's text: only ever set as text.
 */
import type { PanelHost } from '../shared/host.js';
import {
  type Annotation,
  AnnotationDeleteRequest,
  AnnotationSaveRequest,
  AnnotationsListRequest,
  type AnnotationTarget,
} from '../../protocol/panel-protocol.js';
import { button, h, replaceChildren } from '../shared/dom.js';

/** The list's annotation filter: any rollout, annotated ones, ones without, or those with a tag ("tag:NAME"). */
export type AnnotationFilter = 'any' | 'annotated' | 'none' | `tag:${string}`;

export function isAnnotationFilter(value: unknown): value is AnnotationFilter {
  return value === 'any' || value === 'annotated' || value === 'none' || (typeof value === 'string' && value.startsWith('tag:') && value.length > 4);
}

/** One key per rollout a target can name (its file and line). */
export function targetKey(target: Pick<AnnotationTarget, 'kind' | 'step' | 'key' | 'line'>): string {
  return target.kind === 'step' ? `step:${target.step ?? ''}:${target.line}` : `eval:${target.key ?? ''}:${target.line}`;
}

/** Whether the annotations of a rollout pass the filter. */
export function passes(filter: AnnotationFilter, annotations: readonly Annotation[]): boolean {
  if (filter === 'any') return true;
  if (filter === 'annotated') return annotations.length > 0;
  if (filter === 'none') return annotations.length === 0;
  const tag = filter.slice(4);
  return annotations.some((a) => a.tags.includes(tag));
}

type Target = Pick<AnnotationTarget, 'kind' | 'step' | 'key' | 'line'>;

/** The annotations of the runs a viewer shows, by run and rollout. */
export class Annotations {
  private readonly byRun = new Map<string, { byTarget: Map<string, Annotation[]>; problems: string[] }>();

  constructor(
    private readonly host: PanelHost,
    /** A bundle shows annotations but cannot save them. */
    private readonly readOnly: boolean,
  ) {}

  /** Reads a run's annotations (again). */
  async load(runId: string): Promise<void> {
    let reply: { annotations: Annotation[]; problems: string[] };
    try {
      reply = await this.host.request(AnnotationsListRequest, { runId });
    } catch (err) {
      reply = { annotations: [], problems: [`annotations could not be read: ${(err as Error).message}`] };
    }
    const byTarget = new Map<string, Annotation[]>();
    for (const annotation of reply.annotations) {
      const key = targetKey(annotation.target);
      byTarget.set(key, [...(byTarget.get(key) ?? []), annotation]);
    }
    this.byRun.set(runId, { byTarget, problems: reply.problems });
  }

  /** Reads a run's annotations unless they were read already. */
  async ensure(runId: string): Promise<void> {
    if (!this.byRun.has(runId)) await this.load(runId);
  }

  of(runId: string, target: Target): Annotation[] {
    return this.byRun.get(runId)?.byTarget.get(targetKey(target)) ?? [];
  }

  /** Every tag used in a run, sorted. */
  tags(runId: string): string[] {
    return [...new Set([...(this.byRun.get(runId)?.byTarget.values() ?? [])].flat().flatMap((a) => a.tags))].sort();
  }

  /** A row's mark: a tag icon with the tags and the start of the comments as its title; null when not annotated. */
  mark(runId: string, target: Target): HTMLElement | null {
    const found = this.of(runId, target);
    if (found.length === 0) return null;
    const title = found.map((a) => [a.tags.join(', '), a.comment.slice(0, 80)].filter((s) => s !== '').join(': ')).join('\n');
    return h('span', { class: 'annotated', title, 'data-testid': 'annotated-mark' }, h('span', { class: 'codicon codicon-tag', 'aria-hidden': 'true' }), h('span', { class: 'visually-hidden' }, `annotated: ${title}`));
  }

  /** The section under a rollout: its annotations, each editable, and a form for a new one. */
  section(runId: string, target: AnnotationTarget, changed: () => void): HTMLElement {
    const element = h('section', { class: 'annotations', 'aria-label': 'Annotations', 'data-testid': 'annotations' });
    const message = h('span', { class: 'annotation-message', role: 'status' });
    const reload = async () => {
      await this.load(runId);
      render();
      changed();
    };
    const form = (editing: Annotation | null): HTMLElement => {
      const tags = h('input', { type: 'text', placeholder: 'tags, comma separated', 'aria-label': 'tags', 'data-testid': 'annotation-tags', value: editing?.tags.join(', ') ?? '' });
      const comment = h('textarea', { rows: 2, placeholder: 'comment', 'aria-label': 'comment', 'data-testid': 'annotation-comment' });
      comment.value = editing?.comment ?? '';
      const known = this.tags(runId);
      const submit = async () => {
        try {
          await this.host.request(AnnotationSaveRequest, { runId, ...(editing ? { id: editing.id } : {}), target, tags: tags.value.split(','), comment: comment.value });
          await reload();
        } catch (err) {
          message.textContent = (err as Error).message;
        }
      };
      const save = button(editing ? 'Save changes' : 'Add annotation', () => void submit(), { icon: 'tag', testid: 'annotation-save' });
      return h('div', { class: 'annotation-form' }, tags, comment, save, known.length > 0 ? h('span', { class: 'muted' }, `tags in this run: ${known.join(', ')}`) : null, message);
    };
    const render = () => {
      const list = this.of(runId, target).map((annotation) =>
        h(
          'li',
          { class: 'annotation', 'data-testid': 'annotation', 'data-id': annotation.id },
          ...annotation.tags.map((tag) => h('span', { class: 'tag-chip', 'data-testid': 'tag-chip' }, tag)),
          annotation.comment ? h('span', { class: 'annotation-comment' }, annotation.comment) : null,
          h('span', { class: 'muted' }, ` · ${new Date(annotation.time * 1000).toISOString().slice(0, 16).replace('T', ' ')}`),
          this.readOnly ? null : button('', () => element.querySelector('.annotation-form')?.replaceWith(form(annotation)), { icon: 'edit', secondary: true, title: 'Edit this annotation', testid: 'annotation-edit' }),
          this.readOnly
            ? null
            : button('', () => void this.host.request(AnnotationDeleteRequest, { runId, id: annotation.id }).then(reload, (err: Error) => (message.textContent = err.message)), { icon: 'trash', secondary: true, title: 'Remove this annotation', testid: 'annotation-delete' }),
        ),
      );
      replaceChildren(
        element,
        h('h3', null, 'Annotations'),
        list.length > 0 ? h('ul', { class: 'annotation-list' }, ...list) : h('p', { class: 'muted' }, this.readOnly ? 'None.' : 'None yet: tag this rollout or note something about it.'),
        ...(this.byRun.get(runId)?.problems ?? []).map((p) => h('p', { class: 'muted' }, p)),
        this.readOnly ? null : form(null),
      );
    };
    render();
    return element;
  }
}
