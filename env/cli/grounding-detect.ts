/**
 * `vistool grounding detect --image IMG [--kind table|vbar|hbar|auto]`: finds the bands of an
 * image that has no metadata and prints them as JSON metadata (`"source": "ocr"`), the format
 * `vistool tools apply --meta` and the tasks read. Diagnostics (what was dropped, timings) go
 * to stderr with --verbose, so stdout stays one parseable object.
 */
import { readFile } from 'node:fs/promises';
import { decodeImage } from '../core/image.js';
import type { RequestedKind } from '../grounding/classify.js';
import { type CliCommand, parseCommandArgs, UsageError } from './command.js';
import type { CliStreams } from './data-gen.js';

const KINDS: readonly RequestedKind[] = ['auto', 'table', 'vbar', 'hbar'];

const usage = `vistool grounding detect --image IMG [--kind table|vbar|hbar|auto] [--verbose]

  --image IMG   a chart or table image (PNG, JPEG, WebP, ...)
  --kind        the layout to look for (default auto: decided from the image)
                table: columns_bbox (keyed by header) and rows_bbox (keyed by first cell)
                vbar:  x_values_bbox (one full-height band per x tick label)
                hbar:  y_values_bbox (one full-width band per y tick label)
  --verbose     also print the layout found, dropped labels and timings to stderr

Prints the metadata as JSON on stdout ("unit": "pixels", "source": "ocr"); save it and pass it
to \`vistool tools apply --meta\`. Exits 1 when no layout of the asked kind is found.
OCR runs on CPU; set VISTOOL_OCR_DEVICE=cuda to use onnxruntime-node's CUDA provider when installed.`;

export function createGroundingDetectCommand(io: CliStreams = { stdout: process.stdout, stderr: process.stderr }): CliCommand {
  return {
    path: ['grounding', 'detect'],
    summary: 'Find column, row and tick-label bands of an image by OCR; print them as metadata JSON',
    usage,
    async run(argv) {
      const { values } = parseCommandArgs({ args: argv, options: { image: { type: 'string' }, kind: { type: 'string' }, verbose: { type: 'boolean' } }, strict: true, allowPositionals: false });
      if (!values.image) throw new UsageError('--image is required: the chart or table to ground');
      const kind = (values.kind ?? 'auto') as RequestedKind;
      if (!KINDS.includes(kind)) throw new UsageError(`--kind must be one of ${KINDS.join(', ')}; got '${values.kind}'`);
      let bytes: Buffer;
      try {
        bytes = await readFile(values.image);
      } catch (err) {
        throw new Error(`cannot read image '${values.image}': ${(err as Error).message}`, { cause: err });
      }
      const image = await decodeImage(bytes).catch((err: unknown) => {
        throw new Error(`'${values.image}' is not an image sharp can decode (${(err as Error).message}); give a PNG, JPEG or WebP file`, { cause: err });
      });
      // Loaded here, not at the top: every other command must start without onnxruntime.
      const { groundImage } = await import('../grounding/ground.js');
      const { ocrSessions, requestedDevice } = await import('../grounding/sessions.js');
      const sessions = await ocrSessions({ device: requestedDevice() });
      const grounding = await groundImage(image, { kind, sessions });
      io.stdout.write(JSON.stringify(grounding.meta, null, 2) + '\n');
      if (values.verbose) {
        const t = grounding.timing;
        io.stderr.write(`grounding: ${grounding.kind ?? 'no layout'} with ${grounding.labels.length} labels on ${sessions.device} in ${t.totalMs.toFixed(0)} ms (detect ${t.detectMs.toFixed(0)}, layout ${t.layoutMs.toFixed(0)}, read ${t.recognizeMs.toFixed(0)})\n`);
        for (const line of grounding.dropped) io.stderr.write(`  dropped ${line}\n`);
      }
      if (grounding.kind === null) {
        io.stderr.write(`grounding: no ${kind === 'auto' ? 'table or bar chart' : kind} layout found in '${values.image}'; the metadata above has no bands${kind === 'auto' ? '' : '. Try --kind auto'}\n`);
        return 1;
      }
      return 0;
    },
  };
}

export const groundingDetectCommand = createGroundingDetectCommand();
