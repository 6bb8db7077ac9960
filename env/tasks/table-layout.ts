/**
 * Lays out and draws a table (styles: plain, grid, zebra stripes, merged/bold header) and
 * records its exact geometry: columns_bbox (full table height, header included), rows_bbox
 * (data rows keyed by their first cell, header excluded), cells_bbox (row 0 = header) and
 * figure_bbox (the table). Every boundary is an integer pixel edge; every label is placed with
 * padding so its ink sits inside its bands with the tools' 2 px inset to spare.
 */
import type { BBox } from '../tools/metadata.js';
import { type DataTable, displayCell } from './data-table.js';
import type { TableStyle } from './difficulty.js';
import { MIN_FONT_SIZE } from './difficulty.js';
import { BAND_INSET_PX, LayoutError } from './layout-error.js';
import { labelWidth, placeText, type TextStyle } from './place-text.js';
import type { Layer, Scene } from './scene.js';
import { rect } from './svg.js';
import { lineInk } from './text-metrics.js';

export interface TableColours {
  text: string;
  line: string;
  headerFill: string;
  headerText: string;
  groupFill: string;
  stripe: string;
}

export interface TableLayoutInput {
  data: DataTable;
  style: TableStyle;
  /** Preferred font size; shrunk (not below MIN_FONT_SIZE) to fit a forced canvas. */
  fontSize: number;
  title: string | null;
  canvas: { width: number; height: number } | null;
  colours: TableColours;
}

interface Metrics {
  fs: number;
  padX: number;
  padY: number;
  rowH: number;
  colW: number[];
  groupH: number;
  titleH: number;
  titleW: number;
  margin: number;
  width: number;
  height: number;
}

const SHORT_GROUP_LABEL: Readonly<Record<string, string>> = { Details: 'Info', Statistics: 'Stats' };

/** Column groups for the merged super-header: runs of category and of number columns. */
function columnGroups(data: DataTable): { label: string; from: number; to: number }[] {
  const groups: { label: string; from: number; to: number }[] = [];
  data.columns.forEach((c, i) => {
    const label = c.kind === 'key' ? '' : c.kind === 'category' ? 'Details' : 'Statistics';
    const last = groups[groups.length - 1];
    if (last && last.label === label) last.to = i;
    else groups.push({ label, from: i, to: i });
  });
  return groups;
}

function measure(input: TableLayoutInput, fs: number, tight: boolean): Metrics {
  const { data } = input;
  const body: TextStyle = { fontSize: fs };
  const head: TextStyle = { fontSize: fs, weight: 'bold' };
  const padX = Math.max(BAND_INSET_PX + 2, Math.round(fs * (tight ? 0.35 : 0.55)));
  const padY = Math.max(BAND_INSET_PX + 1, Math.round(fs * (tight ? 0.2 : 0.32)));
  const ink = lineInk(fs);
  const lineH = Math.ceil(ink.bottom - ink.top);
  const rowH = lineH + 2 * padY;
  const colW = data.columns.map((column, c) => {
    let widest = labelWidth(column.name, head);
    for (let r = 0; r < data.rows.length; r++) widest = Math.max(widest, labelWidth(displayCell(data, r, c), body));
    return Math.ceil(widest + 2 * padX);
  });
  const groupH = input.style === 'header' ? rowH : 0;
  const titleStyle: TextStyle = { fontSize: fs * 1.15, weight: 'bold' };
  const titleInk = lineInk(titleStyle.fontSize);
  const titleH = input.title ? Math.ceil(titleInk.bottom - titleInk.top) + Math.max(3, Math.round(fs * 0.5)) : 0;
  const titleW = input.title ? Math.ceil(labelWidth(input.title, titleStyle)) : 0;
  const margin = tight ? 2 : Math.max(4, Math.round(fs * 0.75));
  const tableW = colW.reduce((a, b) => a + b, 0);
  const width = 2 * margin + Math.max(tableW, titleW);
  const height = 2 * margin + titleH + groupH + (data.rows.length + 1) * rowH;
  return { fs, padX, padY, rowH, colW, groupH, titleH, titleW, margin, width, height };
}

function fit(input: TableLayoutInput): Metrics {
  const canvas = input.canvas;
  if (!canvas) return measure(input, input.fontSize, false);
  const tight = canvas.width < 320 || canvas.height < 200;
  for (let fs = input.fontSize; fs >= MIN_FONT_SIZE; fs -= 0.5) {
    const m = measure(input, fs, tight);
    if (m.width <= canvas.width && m.height <= canvas.height) return m;
  }
  const smallest = measure(input, MIN_FONT_SIZE, tight);
  throw new LayoutError(
    `a table of ${input.data.rows.length} rows × ${input.data.columns.length} columns needs at least ${smallest.width}×${smallest.height} px at the smallest font (${MIN_FONT_SIZE} px); the canvas is ${canvas.width}×${canvas.height}. Use a larger --image-size or a lower --difficulty.`,
  );
}

export function layoutTable(input: TableLayoutInput): Scene {
  const { data, style, colours } = input;
  const m = fit(input);
  const width = input.canvas?.width ?? m.width;
  const height = input.canvas?.height ?? m.height;
  const tableW = m.colW.reduce((a, b) => a + b, 0);
  const contentW = Math.max(tableW, m.titleW);
  const contentH = m.titleH + m.groupH + (data.rows.length + 1) * m.rowH;
  const left = Math.floor((width - contentW) / 2);
  const top = Math.floor((height - contentH) / 2);
  const x0 = left + Math.floor((contentW - tableW) / 2);
  const colX: number[] = [x0];
  for (const w of m.colW) colX.push((colX[colX.length - 1] as number) + w);
  const headerTop = top + m.titleH + m.groupH;
  const rowTop = (r: number) => headerTop + (r + 1) * m.rowH; // r = data row index
  const tableBottom = headerTop + (data.rows.length + 1) * m.rowH;
  const tableRight = x0 + tableW;

  const layers: Layer[] = [];
  const body: TextStyle = { fontSize: m.fs };
  const head: TextStyle = { fontSize: m.fs, weight: 'bold' };
  const headerText = style === 'header' ? colours.headerText : colours.text;

  // Backgrounds and rules first; text (the marks) on top.
  if (style === 'grid') layers.push(rect(x0, headerTop, tableW, m.rowH, colours.headerFill));
  if (style === 'header') layers.push(rect(x0, headerTop, tableW, m.rowH, colours.headerFill));
  if (style === 'zebra') for (let r = 1; r < data.rows.length; r += 2) layers.push(rect(x0, rowTop(r), tableW, m.rowH, colours.stripe));
  if (style === 'plain') {
    layers.push(rect(x0, headerTop, tableW, 2, colours.line));
    layers.push(rect(x0, rowTop(0) - 1, tableW, 1, colours.line));
    layers.push(rect(x0, tableBottom - 2, tableW, 2, colours.line));
  }
  if (style === 'zebra') layers.push(rect(x0, rowTop(0) - 1, tableW, 1, colours.line));
  if (style === 'header') {
    for (let r = 1; r < data.rows.length; r++) layers.push(rect(x0, rowTop(r), tableW, 1, colours.stripe));
    layers.push(rect(x0, tableBottom - 1, tableW, 1, colours.line));
  }
  if (style === 'grid') {
    for (let c = 0; c <= data.columns.length; c++) {
      const x = c === data.columns.length ? tableRight - 1 : (colX[c] as number);
      layers.push(rect(x, headerTop, 1, tableBottom - headerTop, colours.line));
    }
    for (let r = 0; r <= data.rows.length + 1; r++) {
      const y = r === data.rows.length + 1 ? tableBottom - 1 : headerTop + r * m.rowH;
      layers.push(rect(x0, y, tableW, 1, colours.line));
    }
  }

  if (input.title) {
    const t = placeText(input.title, { fontSize: m.fs * 1.15, weight: 'bold' }, { x: left + Math.floor((contentW - m.titleW) / 2), y: top, h: 'left', v: 'top' });
    layers.push({ name: `title "${input.title}"`, owners: {}, draw: (fill) => [t.draw(fill ?? colours.text)] });
  }
  if (style === 'header') {
    const groupTop = top + m.titleH;
    for (const g of columnGroups(data)) {
      const gx1 = colX[g.from] as number;
      const gx2 = colX[g.to + 1] as number;
      if (g.label === '') continue;
      layers.push(rect(gx1 + 1, groupTop, gx2 - gx1 - 2, m.rowH - 1, colours.groupFill));
      // A narrow group gets the short form of its label, or none.
      const label = [g.label, SHORT_GROUP_LABEL[g.label] ?? ''].find((l) => l !== '' && labelWidth(l, head) + 2 * m.padX <= gx2 - gx1);
      if (label === undefined) continue;
      const t = placeText(label, head, { x: (gx1 + gx2) / 2, y: groupTop + m.padY, h: 'center', v: 'top' });
      layers.push({ name: `group header "${label}"`, owners: {}, draw: (fill) => [t.draw(fill ?? colours.text)] });
    }
  }

  const columnsBox: Record<string, BBox> = {};
  const rowsBox: Record<string, BBox> = {};
  const cells: BBox[][] = [];
  data.columns.forEach((column, c) => {
    columnsBox[column.name] = { x1: colX[c] as number, y1: headerTop, x2: colX[c + 1] as number, y2: tableBottom };
  });
  const headerCells: BBox[] = [];
  data.columns.forEach((column, c) => {
    const x1 = colX[c] as number;
    const x2 = colX[c + 1] as number;
    headerCells.push({ x1, y1: headerTop, x2, y2: headerTop + m.rowH });
    const right = column.kind === 'number';
    const t = placeText(column.name, head, { x: right ? x2 - m.padX : x1 + m.padX, y: headerTop + m.padY, h: right ? 'right' : 'left', v: 'top' });
    layers.push({ name: `header "${column.name}"`, owners: { columns: column.name }, draw: (fill) => [t.draw(fill ?? headerText)] });
  });
  cells.push(headerCells);
  data.rows.forEach((row, r) => {
    const key = String(row[0]);
    const y1 = rowTop(r);
    rowsBox[key] = { x1: x0, y1, x2: tableRight, y2: y1 + m.rowH };
    const rowCells: BBox[] = [];
    data.columns.forEach((column, c) => {
      const x1 = colX[c] as number;
      const x2 = colX[c + 1] as number;
      rowCells.push({ x1, y1, x2, y2: y1 + m.rowH });
      const right = column.kind === 'number';
      const content = displayCell(data, r, c);
      const t = placeText(content, body, { x: right ? x2 - m.padX : x1 + m.padX, y: y1 + m.padY, h: right ? 'right' : 'left', v: 'top' });
      layers.push({ name: `cell (${key}, ${column.name})`, owners: { columns: column.name, rows: key }, draw: (fill) => [t.draw(fill ?? colours.text)] });
    });
    cells.push(rowCells);
  });

  return {
    width,
    height,
    background: '#ffffff',
    layers,
    meta: {
      unit: 'pixels',
      source: 'generator',
      figure_bbox: { x1: x0, y1: headerTop, x2: tableRight, y2: tableBottom },
      columns_bbox: columnsBox,
      rows_bbox: rowsBox,
      cells_bbox: cells,
    },
  };
}
