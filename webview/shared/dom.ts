/**
 * Building DOM without HTML strings. Text always goes in as text nodes, attributes through
 * setAttribute, so nothing a model wrote (or a run file holds) can become markup, a script or
 * an event handler. This module must never use innerHTML, outerHTML, insertAdjacentHTML or
 * document.write; the panels build all their markup through `h`.
 */

export type Child = Node | string | number | null | undefined | false;

export interface Attributes {
  [name: string]: string | number | boolean | null | undefined | ((event: Event) => void);
}

/** Attribute names that could run code or load a resource: refused so a caller's mistake cannot open a hole. */
function isDangerous(name: string): boolean {
  const lower = name.toLowerCase();
  return lower === 'srcdoc' || lower === 'formaction' || lower === 'style';
}

/**
 * `h('div', {class: 'x', onclick: fn}, 'text', child)`. `on<event>` keys add listeners;
 * `true` sets an empty attribute, `false`/null/undefined leave it out.
 */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attributes?: Attributes | null, ...children: Child[]): HTMLElementTagNameMap[K];
export function h(tag: string, attributes?: Attributes | null, ...children: Child[]): HTMLElement;
export function h(tag: string, attributes: Attributes | null = null, ...children: Child[]): HTMLElement {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes ?? {})) {
    if (typeof value === 'function') {
      if (!name.startsWith('on')) throw new Error(`h(${tag}): a function may only be given for an on<event> key, not '${name}'`);
      element.addEventListener(name.slice(2), value);
      continue;
    }
    if (value === false || value === null || value === undefined) continue;
    if (name.toLowerCase().startsWith('on') || isDangerous(name)) throw new Error(`h(${tag}): attribute '${name}' is not allowed; pass a listener function for events`);
    if ((name === 'href' || name === 'src') && typeof value === 'string' && !isSafeUrl(value)) throw new Error(`h(${tag}): refusing ${name}='${value}' (only relative, http(s), data:image and blob: URLs)`);
    element.setAttribute(name, value === true ? '' : String(value));
  }
  append(element, ...children);
  return element;
}

export function append(parent: Node, ...children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === 'string' || typeof child === 'number' ? document.createTextNode(String(child)) : child);
  }
}

/** Replaces every child of `parent`. */
export function replaceChildren(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, ...children);
}

/** URLs the panels may put in href/src: relative paths, http(s), data:image/..., blob:, vscode-webview resources. */
export function isSafeUrl(url: string): boolean {
  const trimmed = url.trim().toLowerCase();
  if (trimmed.startsWith('data:')) return trimmed.startsWith('data:image/');
  const scheme = /^([a-z][a-z0-9+.-]*):/.exec(trimmed)?.[1];
  return scheme === undefined || ['http', 'https', 'blob', 'vscode-webview', 'vscode-resource'].includes(scheme);
}

/** A codicon: `<span class="codicon codicon-NAME" aria-hidden="true">`. */
export function icon(name: string): HTMLElement {
  return h('span', { class: `codicon codicon-${name}`, 'aria-hidden': 'true' });
}

/** A button from @vscode-elements with an optional codicon. */
export function button(label: string, onClick: () => void, options: { icon?: string; secondary?: boolean; title?: string; testid?: string } = {}): HTMLElement {
  return h('vscode-button', { icon: options.icon, secondary: options.secondary ?? false, title: options.title ?? label, 'data-testid': options.testid, onclick: () => onClick() }, label);
}

export function formatNumber(value: number | null | undefined, digits = 3): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '–';
  if (value !== 0 && (Math.abs(value) >= 1e5 || Math.abs(value) < 1e-3)) return value.toExponential(2);
  return Number(value.toFixed(digits)).toString();
}

/** Copies text; falls back to selecting it in a hidden textarea where the clipboard API is refused. */
export async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    const area = h('textarea', { class: 'offscreen', 'aria-hidden': 'true' });
    area.value = text;
    document.body.append(area);
    area.select();
    const ok = document.execCommand('copy');
    area.remove();
    return ok;
  }
}
