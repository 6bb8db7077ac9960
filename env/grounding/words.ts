/**
 * A read segment → words with boxes. Upright text: the ink decides where words are (gaps wider
 * than a space), the recogniser decides what they say: each character goes to the word whose ink
 * is under the recogniser's position for it. This also restores spaces the recogniser dropped
 * ("ViktorBlanc") and never invents words where there is no ink.
 * Rotated text: the recogniser's spaces split it, its positions place the words along the slant.
 */
import type { BBox } from '../tools/metadata.js';
import type { ReadRegion } from './recognize-text.js';
import type { TextSegment } from './segments.js';
import { resolveLookalikes } from './lookalikes.js';
import type { ReadCharacter } from './types.js';

export interface SegmentWord {
  text: string;
  box: BBox;
  confidence: number;
}

/** `titleCase`: the text is a label, whose words usually start with a capital (see lookalikes.ts). */
export function wordsOfSegment(segment: TextSegment, read: ReadRegion, imageWidth: number, imageHeight: number, titleCase = false): SegmentWord[] {
  if (read.characters.length === 0) return [];
  return segment.upright && segment.wordBoxes.length > 0 ? uprightWords(segment, read.characters, titleCase) : slantedWords(segment, read.characters, imageWidth, imageHeight, titleCase);
}

function uprightWords(segment: TextSegment, characters: ReadCharacter[], titleCase: boolean): SegmentWord[] {
  const start = segment.region.center.x - segment.region.length / 2;
  // When the recogniser's words and the ink's words agree in number, pair them in order: CTC
  // positions lag by up to a letter, which at a word's edge would hand its last letter to the next.
  const spoken = groupBySpaces(characters).filter((g) => g.length > 0);
  const assigned: ReadCharacter[][] = spoken.length === segment.wordBoxes.length ? spoken : assignByPosition(segment, characters, start);
  return uprightWordsFrom(segment, assigned, start, titleCase);
}

/** Each character to the ink word under (or nearest to) the recogniser's position for it. */
function assignByPosition(segment: TextSegment, characters: ReadCharacter[], start: number): ReadCharacter[][] {
  const assigned: ReadCharacter[][] = segment.wordBoxes.map(() => []);
  for (const ch of characters) {
    const x = start + ch.offset;
    let best = 0;
    let bestDistance = Infinity;
    segment.wordBoxes.forEach((box, i) => {
      const distance = x < box.x1 ? box.x1 - x : x >= box.x2 ? x - box.x2 + 1 : 0;
      if (distance < bestDistance) {
        bestDistance = distance;
        best = i;
      }
    });
    (assigned[best] as ReadCharacter[]).push(ch);
  }
  return assigned;
}

function uprightWordsFrom(segment: TextSegment, assigned: ReadCharacter[][], start: number, titleCase: boolean): SegmentWord[] {
  const words: SegmentWord[] = [];
  segment.wordBoxes.forEach((box, i) => {
    const chars = (assigned[i] as ReadCharacter[]).filter((c) => c.text !== ' ');
    if (chars.length === 0) return; // ink the recogniser saw no text in (a rule's end, a stray mark)
    const gaps = segment.wordGaps?.[i] ?? [];
    // A space the recogniser read where the ink has no gap wider than a letter's is not there ("Footbal l").
    const spaceIsReal = (ch: ReadCharacter) => {
      const x = start + ch.offset;
      const widest = Math.max(0, ...gaps.filter((g) => g.x2 >= x - ch.halfSpan - 1 && g.x1 <= x + ch.halfSpan + 1).map((g) => g.x2 - g.x1));
      return widest >= MIN_SPACE_GAP * segment.textHeight;
    };
    const text = strokeCount(wordText(assigned[i] as ReadCharacter[], titleCase, spaceIsReal), segment.wordRuns[i] ?? 0);
    words.push({ text, box, confidence: mean(chars.map((c) => c.probability)) });
  });
  return words;
}

function slantedWords(segment: TextSegment, characters: ReadCharacter[], width: number, height: number, titleCase: boolean): SegmentWord[] {
  const groups = segment.wordOffsets && segment.wordOffsets.length > 0 ? groupByOffsets(characters, segment.wordOffsets) : groupBySpaces(characters);
  const { center, direction: d, normal: n, length, thickness } = segment.region;
  return groups
    .filter((g) => g.length > 0)
    .map((g) => {
      const first = g[0] as ReadCharacter;
      const last = g[g.length - 1] as ReadCharacter;
      const from = Math.max(0, first.offset - first.halfSpan) - length / 2;
      const to = Math.min(length, last.offset + last.halfSpan) - length / 2;
      const corners = [from, to].flatMap((along) => [-thickness / 2, thickness / 2].map((across) => ({ x: center.x + along * d.x + across * n.x, y: center.y + along * d.y + across * n.y })));
      const box = {
        x1: Math.max(0, Math.floor(Math.min(...corners.map((p) => p.x)))),
        y1: Math.max(0, Math.floor(Math.min(...corners.map((p) => p.y)))),
        x2: Math.min(width, Math.ceil(Math.max(...corners.map((p) => p.x)))),
        y2: Math.min(height, Math.ceil(Math.max(...corners.map((p) => p.y)))),
      };
      return { text: resolveLookalikes(g, titleCase).map((c) => c.text).join(''), box, confidence: mean(g.map((c) => c.probability)) };
    });
}

/** A space needs an ink gap at least this many ink heights wide (letters sit ~0.1–0.25 apart). */
const MIN_SPACE_GAP = 0.25;

/**
 * A word made only of single-stroke capitals (Roman numerals "II", "III") has one ink run per
 * letter; greedy CTC merges a repeated letter it saw without a blank between, so the ink count wins.
 */
function strokeCount(text: string, runs: number): string {
  if (!/^I+$/.test(text) || runs <= text.length || runs > 4) return text;
  return 'I'.repeat(runs);
}

/** The word's text; a space the recogniser read inside one ink word is kept (as one space). */
function groupBySpaces(characters: ReadCharacter[]): ReadCharacter[][] {
  const groups: ReadCharacter[][] = [[]];
  for (const ch of characters) {
    if (ch.text === ' ') {
      if ((groups[groups.length - 1] as ReadCharacter[]).length > 0) groups.push([]);
    } else {
      (groups[groups.length - 1] as ReadCharacter[]).push(ch);
    }
  }
  return groups;
}

/**
 * Each character to the word whose ink span along the text holds (or is nearest to) its
 * position; a space the recogniser read also ends a word (ink gaps in slanted text are less
 * clear-cut than in upright text, so either signal is enough).
 */
function groupByOffsets(characters: ReadCharacter[], spans: readonly [number, number][]): ReadCharacter[][] {
  const groups: ReadCharacter[][] = [];
  let currentSpan = -1;
  let breakNext = true;
  for (const ch of characters) {
    if (ch.text === ' ') {
      breakNext = true;
      continue;
    }
    let best = 0;
    let bestDistance = Infinity;
    spans.forEach(([from, to], i) => {
      const distance = ch.offset < from ? from - ch.offset : ch.offset > to ? ch.offset - to : 0;
      if (distance < bestDistance) {
        bestDistance = distance;
        best = i;
      }
    });
    if (breakNext || best !== currentSpan) groups.push([]);
    (groups[groups.length - 1] as ReadCharacter[]).push(ch);
    currentSpan = best;
    breakNext = false;
  }
  return groups;
}

/** The word's text; a space the recogniser read inside one ink word is kept (as one space) when `spaceIsReal` agrees. */
function wordText(chars: ReadCharacter[], titleCase: boolean, spaceIsReal: (space: ReadCharacter) => boolean): string {
  const parts: ReadCharacter[][] = [[]];
  for (const c of chars) {
    if (c.text === ' ' && spaceIsReal(c)) parts.push([]);
    else if (c.text !== ' ') (parts[parts.length - 1] as ReadCharacter[]).push(c);
  }
  return parts
    .filter((p) => p.length > 0)
    .map((p) => resolveLookalikes(p, titleCase).map((c) => c.text).join(''))
    .join(' ');
}

function mean(values: number[]): number {
  return values.length === 0 ? 0 : values.reduce((a, b) => a + b, 0) / values.length;
}
