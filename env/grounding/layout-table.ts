/**
 * Table layout from text geometry alone: segments → rows (by vertical overlap) → columns (the
 * union of the cells' horizontal extents over the full rows: columns are separated by a gap no
 * cell crosses) → the table block (consecutive rows whose cells each sit in one column) → the
 * header (its first row, filled in most columns) and the data rows.
 *
 * Bands follow the metadata's conventions: a column band runs the table's full height (header
 * included) and splits half-way across the gap between neighbouring columns' ink; a row band
 * runs the table's full width and splits half-way between neighbouring rows' centres. The outer
 * edges sit as far out as the typical padding seen between cells.
 * Titles and merged group headers span columns (or stand alone) and are never labels.
 */
import type { BBox } from '../tools/metadata.js';
import { centreY, groupIntoRows, median, overlap, splitHalfway, unionBox, type LayoutPlan, type PlannedBand } from './layout-plan.js';
import type { TextSegment } from './segments.js';

/** A row counts toward the column structure when it has at least this share of the fullest row's cells. */
const FULL_ROW_SHARE = 0.75;
/** The header row must have a cell in at least this share of the columns. */
const HEADER_SHARE = 0.75;
/** A data row must have a cell in at least this share of the columns. */
const DATA_ROW_SHARE = 0.5;
/** Consecutive table rows are at most this many typical row pitches apart. */
const MAX_ROW_GAP = 1.8;

interface Column {
  x1: number;
  x2: number;
}

export function planTable(segments: readonly TextSegment[], width: number, height: number): LayoutPlan | null {
  const upright = segments.filter((s) => s.upright);
  if (upright.length < 4) return null;
  const rows = groupIntoRows(upright, (s) => s.box);
  const fullest = Math.max(...rows.map((r) => r.length));
  if (fullest < 2) return null;
  const columns = columnsFrom(rows.filter((r) => r.length >= Math.max(2, FULL_ROW_SHARE * fullest)));
  if (columns.length < 2) return null;

  // Cells of each row by column; a row with a segment over two columns is not a table row.
  const placed = rows.map((row) => placeInColumns(row, columns));
  const isTableRow = (i: number, share: number) => {
    const p = placed[i];
    return p !== null && p !== undefined && p.filter((c) => c !== null).length >= Math.max(2, Math.ceil(share * columns.length));
  };
  const header = placed.findIndex((_, i) => isTableRow(i, HEADER_SHARE));
  if (header < 0) return null;
  const centres = rows.map((r) => centreY(unionBox(r.map((s) => s.box))));
  const dataRows: number[] = [];
  for (let i = header + 1; i < rows.length && isTableRow(i, DATA_ROW_SHARE); i++) dataRows.push(i);
  // Rows continue only while the pitch stays regular (a footnote far below is not a row).
  const pitches = dataRows.map((r, k) => (centres[r] as number) - (centres[k === 0 ? header : (dataRows[k - 1] as number)] as number));
  const pitch = median(pitches);
  const keep = pitches.findIndex((p) => p > MAX_ROW_GAP * pitch);
  if (keep >= 0) dataRows.length = keep;
  if (dataRows.length === 0) return null;

  const tableRows = [header, ...dataRows];
  const tableSegments = tableRows.flatMap((r) => (placed[r] as (TextSegment | null)[]).filter((c): c is TextSegment => c !== null));
  // Column ink extents over the table rows only (titles and group headers excluded).
  const inkOf = columns.map((_, c) => {
    const cells = tableRows.map((r) => (placed[r] as (TextSegment | null)[])[c]).filter((s): s is TextSegment => s !== null && s !== undefined);
    return cells.length === 0 ? null : { x1: Math.min(...cells.map((s) => s.box.x1)), x2: Math.max(...cells.map((s) => s.box.x2)) };
  });
  const present = inkOf.map((ink, c) => ({ ink, c })).filter((e): e is { ink: Column; c: number } => e.ink !== null);
  const gaps = present.slice(1).map((e, k) => e.ink.x1 - (present[k] as { ink: Column }).ink.x2);
  const padX = Math.max(2, median(gaps) / 2);
  const rowCentres = tableRows.map((r) => centres[r] as number);
  const rowEdges = splitHalfway(rowCentres, 2 * Math.max(...tableSegments.map((s) => s.textHeight)));
  const top = clamp((rowEdges[0] as [number, number])[0], 0, height);
  const bottom = clamp((rowEdges[rowEdges.length - 1] as [number, number])[1], 0, height);
  const left = clamp((present[0] as { ink: Column }).ink.x1 - padX, 0, width);
  const right = clamp((present[present.length - 1] as { ink: Column }).ink.x2 + padX, 0, width);

  const columnBands: PlannedBand[] = [];
  present.forEach((e, k) => {
    const label = (placed[header] as (TextSegment | null)[])[e.c];
    if (!label) return;
    const x1 = k === 0 ? left : ((present[k - 1] as { ink: Column }).ink.x2 + e.ink.x1) / 2;
    const x2 = k === present.length - 1 ? right : (e.ink.x2 + (present[k + 1] as { ink: Column }).ink.x1) / 2;
    columnBands.push({ label, box: roundBox({ x1, y1: top, x2, y2: bottom }) });
  });
  const firstColumn = (present[0] as { c: number }).c;
  const rowBands: PlannedBand[] = [];
  dataRows.forEach((r, k) => {
    const label = (placed[r] as (TextSegment | null)[])[firstColumn];
    if (!label) return;
    const [y1, y2] = rowEdges[k + 1] as [number, number];
    rowBands.push({ label, box: roundBox({ x1: left, y1, x2: right, y2 }) });
  });
  return { kind: 'table', bands: { columns: columnBands, rows: rowBands }, figure: roundBox({ x1: left, y1: top, x2: right, y2: bottom }) };
}

/** Columns as the merged horizontal extents of the cells of the given rows, left to right. */
function columnsFrom(rows: readonly TextSegment[][]): Column[] {
  const spans = rows.flat().map((s) => ({ x1: s.box.x1, x2: s.box.x2 })).sort((a, b) => a.x1 - b.x1);
  const columns: Column[] = [];
  for (const span of spans) {
    const last = columns[columns.length - 1];
    if (last && span.x1 < last.x2) last.x2 = Math.max(last.x2, span.x2);
    else columns.push({ ...span });
  }
  return columns;
}

/** The row's segments by column index, or null when a segment lies over more than one column or two share one. */
function placeInColumns(row: readonly TextSegment[], columns: readonly Column[]): (TextSegment | null)[] | null {
  const cells: (TextSegment | null)[] = columns.map(() => null);
  for (const s of row) {
    const hits = columns.map((c, i) => ({ i, o: overlap(c.x1, c.x2, s.box.x1, s.box.x2) })).filter((h) => h.o > 0);
    if (hits.length !== 1) return null;
    const i = (hits[0] as { i: number }).i;
    if (cells[i] !== null) return null;
    cells[i] = s;
  }
  return cells;
}

function clamp(v: number, lo: number, hi: number): number {
  return Math.max(lo, Math.min(hi, v));
}

function roundBox(b: BBox): BBox {
  return { x1: Math.round(b.x1), y1: Math.round(b.y1), x2: Math.round(b.x2), y2: Math.round(b.y2) };
}
