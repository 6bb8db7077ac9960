/**
 * The prompt a rollout's policy read before its first turn, exactly as the env rendered it for the
 * run's presentation (the record's `opening`: the system turn, when there was one, and the user
 * turn, parts in order): collapsed under the rollout's summary, so "what did the model actually
 * see?" has an answer for any rollout. Records written before `opening` existed say so.
 *
 * Every text goes into the page as text through `h`, never as markup.
 */
import type { RolloutRecord } from '../../protocol/panel-protocol.js';
import { h } from '../shared/dom.js';

export function openingPrompt(record: RolloutRecord, imageUrl: (ref: string) => string): HTMLElement {
  const opening = record.opening;
  if (opening === undefined) {
    return h('p', { class: 'muted opening-prompt', 'data-testid': 'opening-prompt' }, 'prompt: not in this record (written before rollouts kept the prompt the policy read)');
  }
  const messages = opening.map((message) =>
    h(
      'section',
      { class: `opening-message opening-${message.role}`, 'data-role': message.role },
      h('header', { class: 'turn-head' }, h('span', { class: 'turn-role' }, message.role)),
      ...message.content.map((part) =>
        part.type === 'text'
          ? h('pre', { class: 'observation-text' }, part.text)
          : // Not lazy: a lazy image inside a closed <details> never loads, and the task image is in the cache already.
            h('img', { src: imageUrl(part.ref), alt: 'image shown to the model', class: 'thumb' }),
      ),
    ),
  );
  const system = opening.some((message) => message.role === 'system') ? '' : ', no system turn';
  return h('details', { class: 'opening-prompt', 'data-testid': 'opening-prompt' }, h('summary', null, `prompt the policy read (${opening.length} message${opening.length === 1 ? '' : 's'}${system})`), ...messages);
}
