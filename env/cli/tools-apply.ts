/**
 * `vistool tools apply`: runs tool calls on an image, in order, exactly as an episode would
 * (same registry, same validation, same errors), and writes the final image as PNG.
 * For trying tools by hand and for scripts; it never interprets a call beyond JSON.parse.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { contentHash, decodeImage, encodePng, type RgbImage } from '../core/image.js';
import { resolveMetadata, type ImageMetadata, type PixelMetadata } from '../tools/metadata.js';
import { runToolCall } from '../tools/registry.js';
import type { LabelMatch, ToolCall } from '../tools/types.js';
import { type CliCommand, parseCommandArgs, UsageError } from './command.js';
import type { TextOutput } from './tools-list.js';

const usage = `vistool tools apply --image IMG [--meta META.json] --call '<json call>' [--call ...] --out OUT.png

  --image IMG      the input image (PNG, JPEG, WebP, ...)
  --meta FILE      band metadata as JSON: an ImageMetadata object ({"columns_bbox": {...}, ...}),
                   or a task record holding one under "meta"; pixel or "unit": "normalized".
                   Without it only zoom_in, the lines and mark_point have anything to work on.
  --call JSON      a call {"name": "<tool>", "arguments": {...}}; repeat to apply several in order
  --out OUT.png    where to write the result

Prints a JSON summary on success. On an error nothing is written; the message names the call
(--call #1 is the first) and its error class (E1–E5).`;

export interface AppliedCall {
  index: number;
  name: string;
  summary: string;
  matches: LabelMatch[];
}

export function createToolsApplyCommand(stdout: TextOutput = process.stdout): CliCommand {
  return {
    path: ['tools', 'apply'],
    summary: 'Apply tool calls to an image and write the result as PNG',
    usage,
    async run(argv) {
      const options = readOptions(argv);
      let image = await loadImage(options.image);
      let meta = await loadMetadata(options.meta, image);
      const applied: AppliedCall[] = [];
      for (const [i, text] of options.calls.entries()) {
        const index = i + 1;
        const call = parseCall(text, index);
        const outcome = await runToolCall(image, call, meta);
        if (!outcome.ok) {
          throw new Error(`--call #${index} (${call.name}) failed with ${outcome.error.class}: ${outcome.error.message}`);
        }
        image = outcome.image;
        if (outcome.meta) meta = outcome.meta;
        applied.push({ index, name: call.name, summary: outcome.summary, matches: outcome.matches });
      }
      const png = await encodePng(image);
      const out = resolve(options.out);
      await mkdir(dirname(out), { recursive: true });
      await writeFile(out, png);
      stdout.write(JSON.stringify({ out, width: image.width, height: image.height, sha256: contentHash(png), calls: applied }, null, 2) + '\n');
      return 0;
    },
  };
}

export const toolsApplyCommand = createToolsApplyCommand();

interface ApplyOptions {
  image: string;
  meta?: string;
  calls: string[];
  out: string;
}

function readOptions(argv: string[]): ApplyOptions {
  const values: { image?: string; meta?: string; call?: string[]; out?: string } = parseCommandArgs({
    args: argv,
    options: { image: { type: 'string' }, meta: { type: 'string' }, call: { type: 'string', multiple: true }, out: { type: 'string' } },
    strict: true,
    allowPositionals: false,
  }).values;
  if (!values.image) throw new UsageError('--image is required: the image to edit');
  if (!values.out) throw new UsageError('--out is required: where to write the edited PNG');
  if (!values.call || values.call.length === 0) throw new UsageError('give at least one --call \'{"name": "<tool>", "arguments": {...}}\' (see `vistool tools list`)');
  return { image: values.image, meta: values.meta, calls: values.call, out: values.out };
}

async function loadImage(path: string): Promise<RgbImage> {
  try {
    return await decodeImage(await readFile(path));
  } catch (err) {
    throw new Error(`cannot read image '${path}': ${reason(err)}. Give a PNG, JPEG or WebP file.`, { cause: err });
  }
}

async function loadMetadata(path: string | undefined, image: RgbImage): Promise<PixelMetadata> {
  if (path === undefined) return resolveMetadata({}, image.width, image.height);
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(path, 'utf8'));
  } catch (err) {
    throw new Error(`cannot read metadata '${path}': ${reason(err)}. It must be a JSON file such as {"columns_bbox": {"Wins": {"x1": 0, "y1": 0, "x2": 50, "y2": 200}}}.`, { cause: err });
  }
  // A whole task record is accepted too: its metadata sits under "meta".
  const record = parsed as { meta?: unknown } | null;
  const meta = record !== null && typeof record === 'object' && typeof record.meta === 'object' && record.meta !== null ? record.meta : parsed;
  try {
    return resolveMetadata(meta as ImageMetadata, image.width, image.height);
  } catch (err) {
    throw new Error(`metadata '${path}' does not fit the ${image.width}×${image.height} image: ${reason(err)}`, { cause: err });
  }
}

function parseCall(text: string, index: number): ToolCall {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new Error(`--call #${index} failed with E1: it is not valid JSON (${reason(err)}); write it as '{"name": "<tool>", "arguments": {...}}'`, { cause: err });
  }
  const call = parsed as Partial<ToolCall> | null;
  if (call === null || typeof call !== 'object' || Array.isArray(call) || typeof call.name !== 'string') {
    throw new Error(`--call #${index} failed with E1: a call is an object {"name": "<tool>", "arguments": {...}}`);
  }
  return { name: call.name, arguments: (call.arguments ?? {}) as Record<string, unknown> };
}

function reason(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
