/**
 * Where a search scene's objects go and what lies under them. Objects sit one per cell of a grid
 * whose cells are the largest side plus OBJECT_GAP, each at a random whole-pixel offset inside its
 * cell with OBJECT_GAP / 2 kept clear of the cell's edges: no two objects touch, and no two boxes
 * come nearer than OBJECT_GAP. The background is a texture of grey rects (tiles, planks or
 * bricks: whole-pixel, so painting and PNG compression stay cheap on 3-megapixel canvases) and
 * grey pebbles between the objects; it has no named colour, so it never answers a question.
 */
import type { BBox } from '../../tools/metadata.js';
import { LayoutError } from '../layout-error.js';
import type { Rng } from '../prng.js';
import { circle, rect, type Primitive } from '../svg.js';
import type { SearchObject } from './objects.js';
import { CANVAS_MARGIN, COLOUR_NAMES, LABEL_CHARS, OBJECT_GAP, SHAPES, type SearchProfile } from './profiles.js';

const grey = (v: number) => {
  const h = Math.round(v).toString(16).padStart(2, '0');
  return `#${h}${h}${h}`;
};

/** Random objects on the grid: colour, shape and (for a share of them) a label unique in the scene. */
export function placeObjects(rng: Rng, width: number, height: number, profile: SearchProfile): SearchObject[] {
  const cell = profile.side[1] + OBJECT_GAP;
  const cols = Math.floor((width - 2 * CANVAS_MARGIN) / cell);
  const rows = Math.floor((height - 2 * CANVAS_MARGIN) / cell);
  const count = rng.int(profile.objects[0], profile.objects[1]);
  if (cols * rows < count) {
    const needed = Math.ceil(Math.sqrt(count * (4 / 3))) * cell + 2 * CANVAS_MARGIN;
    throw new LayoutError(`a ${width}×${height} canvas holds ${Math.max(0, cols * rows)} objects of side ${profile.side[1]}; this difficulty draws up to ${count}. Use an --image-size of at least ${needed}x${Math.ceil((needed * 3) / 4)} or a lower --difficulty`);
  }
  const left = Math.floor((width - cols * cell) / 2), top = Math.floor((height - rows * cell) / 2);
  const cells = rng.sample(Array.from({ length: cols * rows }, (_, i) => i), count).sort((a, b) => a - b);
  const used = new Set<string>();
  const label = (): string => {
    for (;;) {
      const t = rng.pick([...LABEL_CHARS]) + rng.pick([...LABEL_CHARS]);
      if (!used.has(t)) {
        used.add(t);
        return t;
      }
    }
  };
  return cells.map((c) => {
    const side = profile.side[0] + 2 * rng.int(0, Math.floor((profile.side[1] - profile.side[0]) / 2));
    const cx = left + (c % cols) * cell, cy = top + Math.floor(c / cols) * cell;
    const room = cell - OBJECT_GAP - side;
    const x1 = cx + OBJECT_GAP / 2 + rng.int(0, room), y1 = cy + OBJECT_GAP / 2 + rng.int(0, room);
    return {
      shape: rng.pick(SHAPES),
      colour: rng.pick(COLOUR_NAMES),
      text: rng.chance(profile.labelled) ? label() : null,
      bbox: { x1, y1, x2: x1 + side, y2: y1 + side },
    };
  });
}

function texture(rng: Rng, width: number, height: number): Primitive[] {
  const out: Primitive[] = [];
  const style = rng.pick(['tiles', 'planks', 'bricks'] as const);
  const base = rng.int(214, 232);
  const tone = () => grey(base + rng.int(-10, 10));
  if (style === 'tiles') {
    const size = rng.int(40, 96);
    for (let y = 0; y < height; y += size) for (let x = 0; x < width; x += size) out.push(rect(x, y, Math.min(size, width - x), Math.min(size, height - y), tone()));
  } else if (style === 'planks') {
    for (let y = 0; y < height;) {
      const h = Math.min(rng.int(24, 80), height - y);
      out.push(rect(0, y, width, h, tone()), rect(0, y, width, Math.min(2, h), grey(base - 30)));
      y += h;
    }
  } else {
    const h = rng.int(24, 44), w = 2 * h;
    for (let y = 0, row = 0; y < height; y += h, row++) {
      for (let x = row % 2 === 0 ? 0 : -h; x < width; x += w) {
        const x1 = Math.max(0, x);
        out.push(rect(x1, y, Math.min(x + w, width) - x1, Math.min(h, height - y), grey(base + 14)));
        const inner = Math.max(0, x + 2);
        if (Math.min(x + w, width) > inner && h > 2) out.push(rect(inner, y + 2, Math.min(x + w, width) - inner, Math.min(h, height - y) - 2, tone()));
      }
    }
  }
  return out;
}

/** Whether a box of reach `pad` about (x, y) stays `pad` clear of every object (all objects scanned: a few hundred per pebble at most). */
function clear(objects: readonly SearchObject[], x: number, y: number, pad: number): boolean {
  return objects.every((o) => x + pad <= o.bbox.x1 || x - pad >= o.bbox.x2 || y + pad <= o.bbox.y1 || y - pad >= o.bbox.y2);
}

/** The background under the objects: a grey texture and pebbles that keep 3 px clear of every object. */
export function backgroundLayers(rng: Rng, width: number, height: number, objects: readonly SearchObject[], clutter: readonly [number, number]): { background: string; layers: Primitive[] } {
  const layers = texture(rng, width, height);
  const pebbles = rng.int(clutter[0], clutter[1]);
  for (let k = 0; k < pebbles; k++) {
    const r = rng.int(2, 6);
    const x = rng.int(r + 2, width - r - 3) + 0.5, y = rng.int(r + 2, height - r - 3) + 0.5;
    if (!clear(objects, x, y, r + 4)) continue;
    const ink = grey(rng.int(120, 185));
    layers.push(rng.chance(0.5) ? circle(x, y, r, ink) : rect(x - 0.5 - r, y - 0.5 - r, 2 * r, r + rng.int(0, r), ink));
  }
  return { background: grey(224), layers };
}

/** The smallest box holding every given box. */
export function unionBox(boxes: readonly BBox[]): BBox {
  return {
    x1: Math.min(...boxes.map((b) => b.x1)), y1: Math.min(...boxes.map((b) => b.y1)),
    x2: Math.max(...boxes.map((b) => b.x2)), y2: Math.max(...boxes.map((b) => b.y2)),
  };
}
