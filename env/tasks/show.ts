/**
 * A picture of a task for a person: the image with every band outlined and labelled (columns
 * blue, rows green, x values orange, y values purple; the plot and figure boxes dashed grey),
 * and a caption below with the question, the answer and the gold calls. Drawn as an SVG
 * overlay composited by sharp. Never used as model input.
 */
import sharp from 'sharp';
import type { RgbImage } from '../core/image.js';
import { BAND_FAMILIES, bandKey, type BandFamily, type BBox, type PixelMetadata } from '../tools/metadata.js';
import type { TaskRecord } from './record.js';
import { escapeXml, num } from './svg.js';
import { FONT_FAMILY, measureText } from './text-metrics.js';

const FAMILY_COLOUR: Readonly<Record<BandFamily, string>> = { columns: '#1f5fd6', rows: '#1a9e3a', x_values: '#e07b00', y_values: '#8a3ec9' };

function wrap(text: string, fontSize: number, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/)) {
    const candidate = line ? `${line} ${word}` : word;
    if (line && measureText(candidate, fontSize).advance > width) {
      lines.push(line);
      line = word;
    } else line = candidate;
  }
  if (line) lines.push(line);
  return lines;
}

function tag(x: number, y: number, label: string, colour: string, fontSize: number): string {
  const w = measureText(label, fontSize).advance + 4;
  return `<rect x="${num(x)}" y="${num(y)}" width="${num(w)}" height="${num(fontSize + 3)}" fill="#ffffff" fill-opacity="0.85"/>` +
    `<text x="${num(x + 2)}" y="${num(y + fontSize)}" font-family="${FONT_FAMILY}" font-size="${fontSize}" fill="${colour}" xml:space="preserve">${escapeXml(label)}</text>`;
}

function outline(b: BBox, colour: string, dash = ''): string {
  return `<rect x="${num(b.x1 + 0.5)}" y="${num(b.y1 + 0.5)}" width="${num(b.x2 - b.x1 - 1)}" height="${num(b.y2 - b.y1 - 1)}" fill="none" stroke="${colour}" stroke-width="1"${dash ? ` stroke-dasharray="${dash}"` : ''}/>`;
}

/** The annotated picture as PNG bytes. `meta` must already be in pixels (resolveMetadata). */
export async function renderTaskOverview(task: TaskRecord, image: RgbImage, meta: PixelMetadata): Promise<Buffer> {
  const { width, height } = image;
  const fontSize = Math.max(9, Math.min(12, Math.round(width / 50)));
  const tagSize = fontSize - 1;
  // Tags live in a margin around the image, so they never hide what they label:
  // row and y-value tags to the left, column and x-value tags above.
  const sideLabels = [...Object.keys(meta.rows_bbox ?? {}), ...Object.keys(meta.y_values_bbox ?? {})];
  const left = sideLabels.length > 0 ? Math.ceil(Math.max(...sideLabels.map((l) => measureText(l, tagSize).advance))) + 10 : 0;
  const hasTop = Object.keys(meta.columns_bbox ?? {}).length + Object.keys(meta.x_values_bbox ?? {}).length > 0;
  const top = hasTop ? 2 * (tagSize + 5) : 0;
  const parts: string[] = [];
  const shift = (b: BBox): BBox => ({ x1: b.x1 + left, y1: b.y1 + top, x2: b.x2 + left, y2: b.y2 + top });
  for (const key of ['figure_bbox', 'plot_bbox'] as const) {
    const b = meta[key] as BBox | undefined;
    if (b) parts.push(outline(shift(b), '#888888', '4 3'));
  }
  for (const family of BAND_FAMILIES) {
    const bands = meta[bandKey(family)] as Record<string, BBox> | undefined;
    if (!bands) continue;
    const colour = FAMILY_COLOUR[family];
    Object.entries(bands).forEach(([label, box], i) => {
      const b = shift(box);
      parts.push(outline(b, colour));
      const side = family === 'rows' || family === 'y_values';
      // Neighbouring top tags alternate between two lines so long labels do not collide.
      const x = side ? 2 : b.x1 + 1;
      const y = side ? (b.y1 + b.y2) / 2 - (tagSize + 3) / 2 : (i % 2) * (tagSize + 5);
      parts.push(tag(x, y, label, colour, tagSize));
    });
  }
  const answer = Array.isArray(task.answer) ? task.answer.join(' || ') : task.answer;
  const gold = (task.gold ?? []).map((c) => `${c.name}(${JSON.stringify(Object.values(c.arguments)[0] ?? '')})`).join('; ');
  const outW = Math.max(width + left, 320);
  const captionWidth = outW - 12;
  const lines = [
    ...wrap(`${task.id} · ${task.kind} · d${task.difficulty}${task.family ? ` · ${task.family}` : ''} · ${task.source}`, fontSize, captionWidth),
    ...wrap(`Q: ${task.question}`, fontSize, captionWidth),
    ...wrap(`A: ${answer}`, fontSize, captionWidth),
    ...(gold ? wrap(`gold: ${gold}`, fontSize, captionWidth) : []),
  ];
  const lineH = Math.round(fontSize * 1.35);
  const captionH = lines.length * lineH + 10;
  const imageBottom = top + height;
  const outH = imageBottom + captionH;
  const caption = lines.map((l, i) => `<text x="6" y="${imageBottom + 6 + fontSize + i * lineH}" font-family="${FONT_FAMILY}" font-size="${fontSize}" fill="#111111" xml:space="preserve">${escapeXml(l)}</text>`).join('');
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${outW}" height="${outH}"><rect x="0" y="${imageBottom}" width="${outW}" height="${captionH}" fill="#f4f4f4"/>${parts.join('')}${caption}</svg>`;
  return sharp({ create: { width: outW, height: outH, channels: 3, background: { r: 255, g: 255, b: 255 } } })
    .composite([{ input: image.data, raw: { width, height, channels: 3 }, left, top }, { input: Buffer.from(svg), left: 0, top: 0 }])
    .png()
    .toBuffer();
}
