/**
 * Drag-to-zoom on a chart: press, drag across the plot and release to pick a range of x; a
 * translucent band shows it meanwhile. Double-click asks to zoom out. Pixels are reported
 * relative to the element's left edge (the canvas's, which fills it), for the chart to turn
 * into x values. A drag shorter than a few pixels is a click: `onClick` hears it, with the
 * pointer event (the chart finds the point under it as its tooltip does).
 */

export interface DragZoomHandlers {
  onSelect(left: number, right: number): void;
  onReset(): void;
  onClick?(event: PointerEvent): void;
}

const SHORTEST_DRAG_PX = 6;

export function attachDragZoom(element: HTMLElement, handlers: DragZoomHandlers): void {
  let start: number | null = null;
  let band: HTMLElement | null = null;
  const offset = (event: PointerEvent) => event.clientX - element.getBoundingClientRect().left;
  const clear = () => {
    band?.remove();
    band = null;
    start = null;
  };
  element.addEventListener('pointerdown', (event) => {
    if (event.button !== 0) return;
    start = offset(event);
    element.setPointerCapture(event.pointerId);
  });
  element.addEventListener('pointermove', (event) => {
    if (start === null) return;
    const now = offset(event);
    if (!band && Math.abs(now - start) >= SHORTEST_DRAG_PX) {
      band = document.createElement('div');
      band.className = 'zoom-band';
      band.setAttribute('aria-hidden', 'true');
      Object.assign(band.style, { position: 'absolute', top: '0', bottom: '0', pointerEvents: 'none', background: 'var(--vscode-editor-selectionBackground, rgba(38, 119, 204, 0.25))' });
      element.append(band);
    }
    if (band) Object.assign(band.style, { left: `${Math.min(start, now)}px`, width: `${Math.abs(now - start)}px` });
  });
  element.addEventListener('pointerup', (event) => {
    if (start === null) return;
    const end = offset(event);
    const from = start;
    clear();
    if (Math.abs(end - from) >= SHORTEST_DRAG_PX) handlers.onSelect(Math.min(from, end), Math.max(from, end));
    else handlers.onClick?.(event);
  });
  element.addEventListener('pointercancel', clear);
  element.addEventListener('dblclick', () => handlers.onReset());
}
