/**
 * The presentation's view of a conversation: the messages as the policy reads them. An image the
 * view hides (all but the newest `latest_images`) becomes the words EARLIER_IMAGE in its place;
 * `images_first` puts each message's images before its text. Agents that look at many images keep
 * the last few for the same reason the view exists: the newest image is the one that matters, and
 * the others cost tokens and attention. The episode keeps every message whole; this returns a new
 * list and never changes its input.
 */
import type { ChatMessage, ContentPart } from '../episodes/messages.js';
import { EARLIER_IMAGE } from '../episodes/prompt.js';
import type { PresentationView } from './presentation.js';

export function presentConversation(messages: readonly ChatMessage[], view: PresentationView): ChatMessage[] {
  const total = messages.reduce((sum, message) => sum + message.content.filter((part) => part.type === 'image').length, 0);
  const hidden = view.latest_images === null ? 0 : Math.max(0, total - view.latest_images);
  let seen = 0;
  return messages.map((message) => {
    let content: ContentPart[] = message.content.map((part) => {
      if (part.type !== 'image') return part;
      seen += 1;
      return seen <= hidden ? { type: 'text', text: EARLIER_IMAGE } : part;
    });
    if (view.images_first) content = [...content.filter((part) => part.type === 'image'), ...content.filter((part) => part.type !== 'image')];
    return { ...message, content };
  });
}
