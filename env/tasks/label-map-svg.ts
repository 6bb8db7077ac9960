/**
 * The label map the generator used before paint.ts, kept as an independent reference (the
 * tests compare the two on the same scenes) and for the bench's before/after: librsvg draws the
 * scene, and each mark again alone on white in code colours.
 *
 * Every mark gets a codeword of n bits with exactly k ones (a constant-weight code). Bit b lives
 * in colour channel b % 3 of render ⌊b / 3⌋: a mark whose bit is set is drawn there in a colour
 * that is 0 in that channel and 255 in the others; marks are drawn alone, on white, with the
 * scene's exact geometry. Anti-aliasing darkens every set channel of one mark by exactly the same
 * amount (same coverage, same compositing), so at each pixel the channels at the maximum
 * darkening spell the codeword. Two overlapping marks show up as more than k channels at the
 * maximum, or channels part-way between 0 and the maximum: that pixel is marked CONFLICT
 * instead of being attributed to either mark. Text here is pango's own layout (with kerning),
 * so its pixels are not the generator's.
 */
import type { RgbImage } from '../core/image.js';
import { CONFLICT, labelMapFromIds, NO_INK, type LabelMap } from './label-map.js';
import { rasteriseOpaque, sceneBody, sceneMarks, type Mark, type Scene } from './scene.js';
import { primitivesSvg, primitiveSvg, rect } from './svg.js';

function binomial(n: number, k: number): number {
  let r = 1;
  for (let i = 1; i <= k; i++) r = (r * (n - k + i)) / i;
  return Math.round(r);
}

/** The shortest constant-weight code with at least `count` words: [n, k]. */
export function codeShape(count: number): [number, number] {
  for (let n = 3; n <= 30; n++) {
    const k = Math.floor(n / 2);
    if (binomial(n, k) >= count) return [n, k];
  }
  throw new Error(`label map: ${count} marks is more than a 30-channel code can name`);
}

/** The first `count` n-bit words with exactly k bits set, in increasing order. */
export function codewords(count: number, n: number, k: number): number[] {
  const out: number[] = [];
  for (let word = 0; out.length < count && word < 1 << n; word++) {
    let bits = 0;
    for (let w = word; w; w &= w - 1) bits++;
    if (bits === k) out.push(word);
  }
  return out;
}

function codeColour(word: number, render: number): string | null {
  const channel = (c: number) => ((word >> (render * 3 + c)) & 1 ? 0 : 255);
  const [r, g, b] = [channel(0), channel(1), channel(2)];
  return r === 255 && g === 255 && b === 255 ? null : `rgb(${r},${g},${b})`;
}

/** Above this many pixels in all, one stacked render costs more than separate ones (measured). */
const STACK_LIMIT_PX = 400_000;

/**
 * Renders the scene and its label map. Small images are stacked vertically in ONE SVG (the image
 * and each code render as a section clipped to the canvas, so nothing bleeds between sections,
 * shifted by whole pixels, so glyphs rasterise identically): one sharp call instead of several,
 * which is what makes checking every small generated task affordable. Large images render each
 * section separately, in parallel: librsvg lays every text out again for each strip libvips
 * asks for, so a tall stack costs more than its parts.
 */
export async function renderWithLabelMapSvg(scene: Scene): Promise<{ image: RgbImage; labelMap: LabelMap }> {
  const marks = sceneMarks(scene);
  const { width, height } = scene;
  const [n, k] = marks.length === 0 ? [0, 0] : codeShape(marks.length);
  const words = codewords(marks.length, n, k);
  const renderCount = Math.ceil(n / 3);
  const sections: string[] = [sceneBody(scene)];
  for (let r = 0; r < renderCount; r++) {
    sections.push(
      primitiveSvg(rect(0, 0, width, height, '#ffffff')) +
        marks.map((m, i) => {
          const colour = codeColour(words[i] as number, r);
          return colour === null ? '' : primitivesSvg(m.draw(colour));
        }).join(''),
    );
  }
  const sectionBytes = width * height * 3;
  let buffers: Buffer[];
  if (width * height * sections.length <= STACK_LIMIT_PX) {
    const stackHeight = height * sections.length;
    const clip = `<defs><clipPath id="canvas"><rect x="0" y="0" width="${width}" height="${height}"/></clipPath></defs>`;
    const body = sections.map((s, i) => `<g transform="translate(0 ${i * height})"><g clip-path="url(#canvas)">${s}</g></g>`).join('');
    const stacked = await rasteriseOpaque(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${stackHeight}" viewBox="0 0 ${width} ${stackHeight}">${clip}${body}</svg>`);
    buffers = sections.map((_, i) => stacked.data.subarray(i * sectionBytes, (i + 1) * sectionBytes));
  } else {
    const svg = (s: string) => `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">${s}</svg>`;
    buffers = (await Promise.all(sections.map((s) => rasteriseOpaque(svg(s))))).map((img) => img.data);
  }
  const image: RgbImage = { width, height, data: buffers[0] as Buffer };
  return { image, labelMap: decode(width, height, marks, words, buffers.slice(1)) };
}

function decode(width: number, height: number, marks: Mark[], words: number[], codes: Buffer[]): LabelMap {
  const ids = new Int32Array(width * height).fill(NO_INK);
  const byWord = new Map<number, number>(words.map((w, i) => [w, i]));
  const pixels = width * height;
  for (let p = 0; p < pixels; p++) {
    const o = p * 3;
    let max = 0;
    for (const d of codes) {
      const a = 255 - (d[o] as number), b = 255 - (d[o + 1] as number), c = 255 - (d[o + 2] as number);
      if (a > max) max = a;
      if (b > max) max = b;
      if (c > max) max = c;
    }
    if (max === 0) continue;
    let word = 0;
    let clean = true;
    for (let r = 0; r < codes.length && clean; r++) {
      const d = codes[r] as Buffer;
      for (let ch = 0; ch < 3; ch++) {
        const dark = 255 - (d[o + ch] as number);
        if (dark === max) word |= 1 << (r * 3 + ch);
        else if (dark !== 0) { clean = false; break; }
      }
    }
    const id = clean ? byWord.get(word) : undefined;
    ids[p] = id === undefined ? CONFLICT : id;
  }
  return labelMapFromIds(width, height, marks, ids);
}
