/**
 * The data behind one image: a header and rows, with numbers kept as exact integers in units of
 * 10^-decimals (so sums and averages never meet floating-point error). Tables are drawn from it,
 * charts are drawn from it (first column = the labelled axis, other columns = series), and every
 * question is asked and answered against it. It never knows about pixels.
 */
export interface KeyColumn {
  kind: 'key';
  name: string;
}

export interface CategoryColumn {
  kind: 'category';
  name: string;
  /** "are from {v}": a plural predicate restricting rows to one value of this column. */
  filter: string;
}

export interface NumberColumn {
  kind: 'number';
  name: string;
  /** How a question names the quantity ("wins", "revenue"). */
  noun: string;
  decimals: number;
  /** Show thousands separators in the image ("12,345"). Values are stored without them. */
  grouping: boolean;
}

export type DataColumn = KeyColumn | CategoryColumn | NumberColumn;

/** A cell: text for key and category columns, integer units for number columns. */
export type DataCell = string | number;

export interface DataTable {
  title: string;
  /** What one row is, for question wording ("rider" / "riders"). */
  entity: { one: string; many: string };
  columns: DataColumn[];
  rows: DataCell[][];
}

/** The text of a number stored as integer `units` with `decimals` decimals: "1234.5", "-0.25". */
export function unitsToDecimalString(units: number, decimals: number): string {
  if (!Number.isSafeInteger(units)) throw new Error(`number cell ${units} is not a safe integer count of units`);
  const negative = units < 0;
  const digits = String(Math.abs(units)).padStart(decimals + 1, '0');
  const whole = decimals === 0 ? digits : digits.slice(0, digits.length - decimals);
  const fraction = decimals === 0 ? '' : `.${digits.slice(digits.length - decimals)}`;
  return `${negative ? '-' : ''}${whole}${fraction}`;
}

/** As the image shows it: fixed decimals, optional thousands separators. */
export function displayNumber(units: number, column: NumberColumn): string {
  const plain = unitsToDecimalString(units, column.decimals);
  if (!column.grouping) return plain;
  const [whole = '', fraction] = plain.split('.');
  const sign = whole.startsWith('-') ? '-' : '';
  const grouped = whole.replace('-', '').replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return fraction === undefined ? `${sign}${grouped}` : `${sign}${grouped}.${fraction}`;
}

export function displayCell(table: DataTable, row: number, col: number): string {
  const column = table.columns[col];
  const cell = table.rows[row]?.[col];
  if (column === undefined || cell === undefined) throw new Error(`no cell at row ${row}, column ${col}`);
  if (column.kind === 'number') {
    if (typeof cell !== 'number') throw new Error(`column '${column.name}' is numeric but row ${row} holds text '${cell}'`);
    return displayNumber(cell, column);
  }
  return String(cell);
}

/** The value stored in a TaskRecord's `table`: numbers as JSON numbers, text as text. */
export function recordCell(table: DataTable, row: number, col: number): string | number {
  const column = table.columns[col];
  const cell = table.rows[row]?.[col];
  if (column === undefined || cell === undefined) throw new Error(`no cell at row ${row}, column ${col}`);
  return column.kind === 'number' ? Number(unitsToDecimalString(cell as number, column.decimals)) : String(cell);
}

export function columnIndex(table: DataTable, name: string): number {
  const index = table.columns.findIndex((c) => c.name === name);
  if (index < 0) throw new Error(`no column '${name}' (columns: ${table.columns.map((c) => c.name).join(', ')})`);
  return index;
}

export function rowKeys(table: DataTable): string[] {
  return table.rows.map((r) => String(r[0]));
}
