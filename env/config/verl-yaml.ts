/**
 * verl.yaml's tree, written with the `yaml` package: keys set one at a time by their dotted path,
 * each with the comment that says where its value comes from, and comment lines above a key.
 *
 * The text is YAML 1.1, because veRL reads its config through Hydra, OmegaConf and PyYAML: words
 * PyYAML reads as booleans or null (`yes`, `no`, `on`, `off`, `~`) are quoted, and a number in
 * exponent form keeps a dot and a signed exponent (`1.0e-7`; PyYAML reads `1e-7` as a string).
 * It only builds text; verl-export.ts decides what goes in.
 */
import { Document, isMap, isScalar, Pair, Scalar, YAMLMap, YAMLSeq, type ScalarTag, type Tags } from 'yaml';

/** A number veRL reads as a float: written with a decimal point (1.0, not 1). */
export interface Float {
  float: number;
}
export type YamlScalar = string | number | boolean | null | Float;
/** A scalar, or a list of them (written as a flow list: `[a, b]`). */
export type YamlValue = YamlScalar | YamlScalar[];
export const float = (value: number): Float => ({ float: value });

/** A number as PyYAML reads it back: `1.0` for a float with no fraction, `1.0e-7` rather than `1e-7`. */
function numberText(node: Scalar): string {
  const value = Number(node.value);
  if (!Number.isFinite(value)) throw new Error(`verl-export: ${value} is not a finite number`);
  const text = String(value);
  const exponent = /^(-?\d+)(\.\d+)?e([+-])(\d+)$/.exec(text);
  if (exponent) return `${exponent[1]}${exponent[2] ?? '.0'}e${exponent[3]}${exponent[4]}`;
  return node.minFractionDigits && Number.isInteger(value) ? `${text}.0` : text;
}

/** YAML 1.1's own number tags, each writing its numbers with numberText (the binary, octal and hex forms are never chosen). */
function pyYamlNumbers(tags: Tags): Tags {
  const isNumberTag = (tag: Tags[number]): tag is ScalarTag =>
    typeof tag === 'object' && !('collection' in tag) && (tag.tag === 'tag:yaml.org,2002:float' || tag.tag === 'tag:yaml.org,2002:int') && !tag.format;
  return tags.map((tag) => (isNumberTag(tag) ? { ...tag, stringify: numberText } : tag));
}

function scalarNode(value: YamlScalar): Scalar {
  if (value === null || typeof value !== 'object') return new Scalar(value);
  const node = new Scalar(value.float);
  node.minFractionDigits = 1;
  return node;
}

function valueNode(value: YamlValue): Scalar | YAMLSeq {
  if (!Array.isArray(value)) return scalarNode(value);
  const list = new YAMLSeq();
  list.flow = true;
  list.items.push(...value.map(scalarNode));
  return list;
}

/** Comment text as the yaml package keeps it: one space after each `#`. */
function commentText(lines: readonly string[]): string {
  return lines.map((line) => ` ${line}`).join('\n');
}

export class VerlYaml {
  private readonly doc: Document;
  private readonly root: YAMLMap;

  /** `header`: the comment lines at the top of the file; `preamble`: block-style keys that open it (Hydra's searchpath and defaults). */
  constructor(header: readonly string[], preamble: Record<string, unknown>) {
    this.doc = new Document(preamble, {
      version: '1.1',
      customTags: pyYamlNumbers,
    });
    this.root = this.doc.contents as YAMLMap;
    // Above the first key rather than the document, so no blank line parts the header from it.
    const first = this.root.items[0]?.key;
    if (!isScalar(first)) throw new Error('verl-export: the preamble needs a first key');
    first.commentBefore = commentText(header);
  }

  /** Sets a dotted key. `from` names the vistool key(s) the value comes from (an inline comment). */
  set(path: string, value: YamlValue, from?: string, above: readonly string[] = []): void {
    this.leaf(path, value, from === undefined ? undefined : `vistool: ${from}`, above);
  }

  /** Sets a dotted key whose value does not come from the run config; `why` says where it does come from. */
  fixed(path: string, value: YamlValue, why?: string, above: readonly string[] = []): void {
    this.leaf(path, value, why, above);
  }

  /** Comment lines above a map key (the map is created when absent). */
  note(path: string, lines: readonly string[]): void {
    const parts = path.split('.');
    const key = parts.pop() as string;
    this.addAbove(this.mapAt(parts, path), key, lines, () => new YAMLMap());
  }

  toString(): string {
    return this.doc.toString({ lineWidth: 0, flowCollectionPadding: false });
  }

  private leaf(path: string, value: YamlValue, comment: string | undefined, above: readonly string[]): void {
    const parts = path.split('.');
    const key = parts.pop() as string;
    const parent = this.mapAt(parts, path);
    if (parent.has(key)) throw new Error(`verl-export: ${path} set twice`);
    const node = valueNode(value);
    if (comment !== undefined) node.comment = ` ${comment}`;
    this.addAbove(parent, key, above, () => node);
  }

  /** Puts `key` into `map` (made by `make` when absent) and the comment lines above it. */
  private addAbove(map: YAMLMap, key: string, lines: readonly string[], make: () => YAMLMap | Scalar | YAMLSeq): void {
    let pair = map.items.find((p) => isScalar(p.key) && p.key.value === key) as Pair<Scalar, unknown> | undefined;
    if (!pair) {
      const keyNode = new Scalar(key);
      // A blank line between the top-level sections, as a person would write them.
      if (map === this.root) keyNode.spaceBefore = true;
      pair = new Pair(keyNode, make());
      map.items.push(pair);
    }
    if (lines.length === 0) return;
    const before = pair.key.commentBefore;
    pair.key.commentBefore = before ? `${before}\n${commentText(lines)}` : commentText(lines);
  }

  /** The map at a dotted path's parent parts, created along the way. */
  private mapAt(parts: readonly string[], path: string): YAMLMap {
    let map = this.root;
    for (const part of parts) {
      let next: unknown = map.get(part, true);
      if (next === undefined) {
        const made = new YAMLMap();
        this.addAbove(map, part, [], () => made);
        next = made;
      }
      if (!isMap(next)) throw new Error(`verl-export: ${path}: ${part} is a value, not a map`);
      map = next;
    }
    return map;
  }
}
