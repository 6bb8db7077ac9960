/**
 * The tool playground: open a PNG or JPEG (with its metadata JSON when there is one), pick a
 * tool, fill a form generated from the tool's JSON Schema (labels offered from the metadata),
 * apply it through the real engine on the host, chain more calls, undo, and copy the calls as
 * JSON, as hermes <tool_call> text or as ReFocus Python. The host keeps the image stack; the
 * panel persists only its session id and the chosen tool.
 */
import type { PanelHost } from '../shared/host.js';
import {
  PANEL_TITLES,
  type CallFormat,
  FormatCallRequest,
  type PlaygroundCall,
  PlaygroundApplyRequest,
  PlaygroundOpenedNotification,
  PlaygroundOpenRequest,
  type PlaygroundSnapshot,
  PlaygroundSnapshotRequest,
  PlaygroundUndoRequest,
  ReadyCommand,
  type ToolInfo,
  ToolsListRequest,
} from '../../protocol/panel-protocol.js';
import { button, copyText, h, replaceChildren } from '../shared/dom.js';
import { hasFields, isString } from '../../protocol/guards.js';
import { panelHeader, startPanel } from '../shared/shell.js';
import { ImageCompare } from '../shared/image-compare.js';
import { displayZoom } from './display-zoom.js';
import { type DisplayPoint, dragToImageBox, imageBoxToDisplay, type PixelBox } from './drag-box.js';
import { type ArgumentForm, argumentForm } from './schema-form.js';

interface PlaygroundState {
  session: string;
  tool: string | null;
}

function isPlaygroundState(value: unknown): value is PlaygroundState {
  return hasFields(value, { session: isString, tool: (v) => v === null || isString(v) });
}

function newSession(): string {
  const bytes = new Uint8Array(12);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

async function fileBase64(file: File): Promise<string> {
  const bytes = new Uint8Array(await file.arrayBuffer());
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

class Playground {
  private state: PlaygroundState;
  private tools: ToolInfo[] = [];
  private snapshot: PlaygroundSnapshot | null = null;
  private form: ArgumentForm | null = null;
  /** The image shown was opened by the host (or an earlier page), not from this page's file or path inputs. */
  private openedByHost = false;
  /** Draws a box over the current image (null hides it); set while an image is shown. */
  private drawBox: ((box: PixelBox | null) => void) | null = null;
  private readonly imageInput = h('input', { type: 'file', accept: 'image/png,image/jpeg', 'aria-label': 'image file', 'data-testid': 'image-input' });
  private readonly metaInput = h('input', { type: 'file', accept: 'application/json,.json', 'aria-label': 'metadata JSON file', 'data-testid': 'metadata-input' });
  private readonly pathInput = h('input', { type: 'text', placeholder: 'or a path on the host', 'aria-label': 'image path on the host', 'data-testid': 'path-input' });
  private readonly toolSelect = h('select', { 'aria-label': 'tool', 'data-testid': 'tool-select' });
  private readonly toolPanel = h('section', { class: 'tool-panel', 'aria-label': 'Tool' });
  private readonly message = h('div', { class: 'playground-message', role: 'status', 'data-testid': 'playground-message' });
  private readonly chain = h('ol', { class: 'call-chain', 'data-testid': 'call-chain' });
  private readonly stage = h('section', { class: 'stage', 'aria-label': 'Images', 'data-testid': 'stage' });
  private readonly copied = h('pre', { class: 'copied', 'data-testid': 'copied', hidden: true });

  constructor(
    private readonly host: PanelHost,
    private readonly root: HTMLElement,
  ) {
    this.state = host.getState(isPlaygroundState) ?? { session: newSession(), tool: null };
    // A page opened for an image the viewer sent here (browser host): that session, not this tab's last.
    const given = new URLSearchParams(location.search).get('session');
    if (given !== null && /^[0-9a-f]{8,64}$/.test(given)) this.state.session = given;
  }

  async start(): Promise<void> {
    const openButton = button('Open', () => void this.open(), { icon: 'folder-opened', testid: 'open-button' });
    const header = panelHeader(
      PANEL_TITLES.playground,
      this.host,
      h('label', { class: 'control' }, 'image ', this.imageInput),
      h('label', { class: 'control' }, 'metadata ', this.metaInput),
      this.pathInput,
      openButton,
    );
    this.imageInput.addEventListener('change', () => {
      this.openedByHost = false;
      void this.open();
    });
    // Metadata chosen after the image opens it again with the bands (it was opened with OCR grounding, or none),
    // also when the host opened it (the viewer's "Open in playground", VS Code's explorer): then the image shown is sent back.
    this.metaInput.addEventListener('change', () => {
      if (this.openedByHost && this.snapshot?.images[0]) void this.open(true);
      else if (this.imageInput.files?.[0] || this.pathInput.value.trim() !== '') void this.open();
    });
    // Typed numbers move the drawn box too, so the box on the image is always the one Apply will use.
    this.toolPanel.addEventListener('input', () => this.drawBox?.(this.typedBox()));
    this.toolSelect.addEventListener('change', () => {
      this.state.tool = this.toolSelect.value;
      this.save();
      this.renderTool();
    });
    replaceChildren(
      this.root,
      header,
      h('div', { class: 'playground-body', role: 'main' },
        h('aside', { class: 'playground-side' },
          h('label', { class: 'control tool-choice' }, 'tool ', this.toolSelect),
          this.toolPanel,
          this.message,
          h('h2', null, 'Calls'),
          this.chain,
          h('div', { class: 'chain-actions' },
            button('Undo', () => void this.undo(), { icon: 'discard', secondary: true, testid: 'undo' }),
            button('JSON', () => void this.copy('json'), { icon: 'copy', secondary: true, title: 'Copy the calls as JSON', testid: 'copy-json' }),
            button('<tool_call>', () => void this.copy('hermes'), { icon: 'copy', secondary: true, title: 'Copy as hermes <tool_call> text', testid: 'copy-hermes' }),
            button('ReFocus', () => void this.copy('refocus'), { icon: 'copy', secondary: true, title: 'Copy as a ReFocus Python line', testid: 'copy-refocus' }),
          ),
          this.copied,
        ),
        this.stage,
      ),
    );
    this.host.onNotification(PlaygroundOpenedNotification, ({ snapshot }) => {
      this.state.session = snapshot.session;
      this.save();
      this.openedByHost = true;
      this.show(snapshot);
      this.holdLastCall(snapshot);
    });
    this.tools = (await this.host.request(ToolsListRequest, {})).tools;
    const restored = await this.host.request(PlaygroundSnapshotRequest, { session: this.state.session });
    // An image already open in this session was opened by the host, or in an earlier page: this page has no file or path for it.
    this.openedByHost = restored.name !== null;
    this.show(restored);
    this.holdLastCall(restored);
    this.host.command(ReadyCommand, { panel: 'playground' });
  }

  private save(): void {
    this.host.setState(this.state);
  }

  /** Opens the chosen file or path; `shown`: the image the session opened first again (with the chosen metadata). */
  private async open(shown = false): Promise<void> {
    const file = this.imageInput.files?.[0];
    const path = this.pathInput.value.trim();
    const first = this.snapshot?.images[0];
    const name = this.snapshot?.name;
    if (shown && !(first && name)) shown = false;
    if (!shown && !file && path === '') {
      this.say('Choose a PNG or JPEG file (and its metadata JSON, if it has one), or type a path on the host.', 'info');
      return;
    }
    const metaFile = this.metaInput.files?.[0];
    try {
      // The host sends images as data: URLs of PNG bytes, so the one shown goes back as an upload.
      const image = shown && first && name ? { name, base64: first.src.slice(first.src.indexOf(',') + 1) } : file ? { name: file.name, base64: await fileBase64(file) } : { path };
      const snapshot = await this.host.request(PlaygroundOpenRequest, {
        session: this.state.session,
        image,
        ...(metaFile ? { metadata: { name: metaFile.name, text: await metaFile.text() } } : {}),
      });
      if (!shown) this.openedByHost = false;
      this.show(snapshot);
      this.say(`Opened ${snapshot.name}${snapshot.metadataSource ? ` with metadata from ${snapshot.metadataSource}` : ' without metadata: only the geometry tools apply'}.`, 'info');
    } catch (err) {
      this.say((err as Error).message, 'error');
    }
  }

  private async apply(): Promise<void> {
    if (!this.snapshot?.name) return this.say('Open an image first.', 'info');
    const tool = this.toolSelect.value;
    const read = this.form?.read();
    if (!read) return;
    if ('error' in read) return this.say(read.error, 'error');
    const snapshot = await this.host.request(PlaygroundApplyRequest, { session: this.state.session, call: { name: tool, arguments: read.arguments } });
    this.show(snapshot);
    if (snapshot.error) this.say(`${snapshot.error.class}: ${snapshot.error.message}`, 'error', snapshot.error.class);
    else this.say(snapshot.calls[snapshot.calls.length - 1]?.summary ?? 'applied', 'info');
  }

  /**
   * A session opened with a replayed call (the viewer's "Replay in playground"): the form holds that
   * call, to change and apply again, and the message says what the replay did.
   */
  private holdLastCall(snapshot: PlaygroundSnapshot): void {
    const call = snapshot.replayed;
    if (!call || !this.tools.some((t) => t.name === call.name)) return;
    this.toolSelect.value = call.name;
    this.state.tool = call.name;
    this.save();
    this.renderTool();
    for (const [name, value] of Object.entries(call.arguments)) this.form?.write(name, value);
    this.drawBox?.(this.typedBox());
    if (snapshot.error) this.say(`Replayed ${call.name}: ${snapshot.error.class}: ${snapshot.error.message}`, 'error', snapshot.error.class);
    else this.say(`Replayed ${snapshot.calls.length} call(s) as logged; ${call.name}: ${snapshot.calls[snapshot.calls.length - 1]?.summary ?? 'applied'}. The form holds the call: Undo, change it and Apply to try another in its place.`, 'info');
  }

  private async undo(): Promise<void> {
    if (!this.snapshot?.name) return;
    this.show(await this.host.request(PlaygroundUndoRequest, { session: this.state.session }));
    this.say('Undid the last call.', 'info');
  }

  private async copy(format: CallFormat): Promise<void> {
    const calls: PlaygroundCall[] = this.snapshot?.calls.map((c) => c.call) ?? [];
    if (calls.length === 0) return this.say('No calls to copy yet: apply a tool first.', 'info');
    try {
      const { text } = await this.host.request(FormatCallRequest, { calls, format });
      this.copied.hidden = false;
      this.copied.textContent = text;
      this.copied.dataset.format = format;
      const ok = await copyText(text);
      this.say(ok ? `Copied ${calls.length} call(s) as ${format}.` : 'The clipboard is not available here; the text is shown below.', 'info');
    } catch (err) {
      this.say((err as Error).message, 'error');
    }
  }

  private say(text: string, kind: 'info' | 'error', errorClass?: string): void {
    this.message.textContent = text;
    this.message.className = `playground-message ${kind}`;
    if (errorClass) this.message.dataset.errorClass = errorClass;
    else delete this.message.dataset.errorClass;
  }

  private show(snapshot: PlaygroundSnapshot): void {
    this.snapshot = snapshot;
    this.renderToolChoices();
    this.renderTool();
    replaceChildren(
      this.chain,
      ...snapshot.calls.map((c, i) => h('li', { 'data-testid': 'chain-item' }, h('code', null, c.call.name), ' ', h('span', { class: 'muted' }, JSON.stringify(c.call.arguments)), h('div', { class: 'call-summary' }, c.summary), h('span', { class: 'muted' }, `→ image ${i + 2}`))),
    );
    if (snapshot.calls.length === 0) this.chain.append(h('li', { class: 'muted empty' }, 'No calls yet.'));
    const current = snapshot.images[snapshot.images.length - 1];
    const previous = snapshot.images[snapshot.images.length - 2];
    if (!current) {
      replaceChildren(this.stage, h('p', { class: 'muted empty' }, 'Open a chart or table image to start. With its metadata JSON (columns_bbox, rows_bbox, x_values_bbox, y_values_bbox) the focus tools can use its labels.'));
      return;
    }
    this.stage.dataset.images = String(snapshot.images.length);
    const compare = new ImageCompare(previous?.src ?? current.src, previous ? current.src : null, { before: previous ? `image ${snapshot.images.length - 1}` : 'image 1', after: `image ${snapshot.images.length}` });
    const zoom = displayZoom(current.width, current.height);
    compare.setZoom(zoom);
    this.stage.dataset.zoom = String(zoom);
    this.stage.classList.toggle('pixelated', zoom > 1);
    const title = h('div', { class: 'stage-title' },
        h('strong', null, snapshot.name ?? ''),
        h('span', { class: 'muted' }, ` · ${current.width}×${current.height}${zoom > 1 ? ` shown at ${zoom * 100}%` : ''} · ${snapshot.calls.length} call(s)`),
        h('span', { class: 'muted', 'data-testid': 'metadata-source' }, ` · ${snapshot.metadataSource ? `metadata: ${snapshot.metadataSource}` : 'no metadata'}`));
    const hint = h('div', { class: 'stage-hint muted', 'data-testid': 'drag-hint' }, `Drag a box on image ${snapshot.images.length} to fill the bbox of the chosen tool (zoom_in when it has none), or type the numbers in the form.`);
    replaceChildren(this.stage, title, hint, compare.element);
    // The current image is the one a call reads: the "after" figure once there is a call, else the only one.
    const image = compare.element.querySelector<HTMLImageElement>(previous ? 'img[data-role=after]' : 'img[data-role=before]');
    this.drawBox = image ? this.attachDrag(image, zoom, current.width, current.height) : null;
  }

  /** The bbox typed in the form, when it has one with four numbers. */
  private typedBox(): PixelBox | null {
    const read = this.form?.read();
    const bbox = read && 'arguments' in read ? read.arguments.bbox : undefined;
    return Array.isArray(bbox) && bbox.length === 4 && bbox.every((v) => typeof v === 'number') ? (bbox as PixelBox) : null;
  }

  /**
   * Lets the mouse (or a pen or finger) drag a box on the current image: the box is drawn while
   * dragging, and on release its pixel coordinates fill the form's bbox (drag-box.ts converts
   * them). Returns the function that draws a box over the image.
   */
  private attachDrag(image: HTMLImageElement, zoom: number, width: number, height: number): (box: PixelBox | null) => void {
    const frame = image.parentElement as HTMLElement;
    frame.classList.add('drag-surface');
    frame.dataset.testid = 'drag-surface';
    const overlay = h('div', { class: 'drag-box', 'data-testid': 'drag-box', hidden: true, 'aria-hidden': 'true' });
    frame.append(overlay);
    const draw = (box: PixelBox | null) => {
      overlay.hidden = box === null;
      if (!box) return;
      const shown = imageBoxToDisplay(box, zoom);
      overlay.style.left = `${image.offsetLeft + shown.left}px`;
      overlay.style.top = `${image.offsetTop + shown.top}px`;
      overlay.style.width = `${shown.width}px`;
      overlay.style.height = `${shown.height}px`;
    };
    const at = (event: PointerEvent): DisplayPoint => {
      const rect = image.getBoundingClientRect();
      return { x: event.clientX - rect.left, y: event.clientY - rect.top };
    };
    let start: DisplayPoint | null = null;
    image.draggable = false;
    image.addEventListener('dragstart', (event) => event.preventDefault());
    frame.addEventListener('pointerdown', (event) => {
      if (event.button !== 0) return;
      start = at(event);
      frame.setPointerCapture(event.pointerId);
      event.preventDefault();
    });
    frame.addEventListener('pointermove', (event) => {
      if (start) draw(dragToImageBox(start, at(event), zoom, width, height));
    });
    const finish = (event: PointerEvent, apply: boolean) => {
      if (!start) return;
      const box = apply ? dragToImageBox(start, at(event), zoom, width, height) : null;
      start = null;
      if (frame.hasPointerCapture(event.pointerId)) frame.releasePointerCapture(event.pointerId);
      draw(box ?? this.typedBox());
      if (box) this.fillBox(box);
    };
    frame.addEventListener('pointerup', (event) => finish(event, true));
    frame.addEventListener('pointercancel', (event) => finish(event, false));
    return draw;
  }

  /** A dragged box goes into the current tool's bbox; a tool without one gives way to zoom_in. */
  private fillBox(box: PixelBox): void {
    if (!this.form?.hasTuple('bbox') && this.tools.some((t) => t.name === 'zoom_in')) {
      this.toolSelect.value = 'zoom_in';
      this.state.tool = 'zoom_in';
      this.save();
      this.renderTool();
    }
    if (!this.form?.write('bbox', box)) return;
    this.say(`Box [${box.join(', ')}] in pixels of the current image: Apply runs ${this.toolSelect.value} on it.`, 'info');
  }

  private renderToolChoices(): void {
    const available = new Set(this.snapshot?.availableTools ?? []);
    const ordered = [...this.tools].sort((a, b) => Number(available.has(b.name)) - Number(available.has(a.name)));
    replaceChildren(this.toolSelect, ...ordered.map((tool) => h('option', { value: tool.name }, available.size > 0 && !available.has(tool.name) ? `${tool.name} (needs metadata)` : tool.name)));
    const wanted = this.state.tool && this.tools.some((t) => t.name === this.state.tool) ? this.state.tool : (ordered[0]?.name ?? '');
    this.toolSelect.value = wanted;
  }

  private renderTool(): void {
    const tool = this.tools.find((t) => t.name === this.toolSelect.value);
    if (!tool) {
      replaceChildren(this.toolPanel);
      return;
    }
    this.form = argumentForm(tool, this.snapshot?.labels ?? {});
    replaceChildren(this.toolPanel, h('p', { class: 'tool-description' }, tool.description), this.form.element, button('Apply', () => void this.apply(), { icon: 'play', testid: 'apply' }));
  }
}

startPanel(async (host, root) => {
  await new Playground(host, root).start();
});
