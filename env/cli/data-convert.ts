/**
 * `vistool data convert --from FORMAT SRC --out DIR`: reads a data set in one of the field's
 * formats (ChartQA, CharXiv, TableVQA-Bench, ReFocus chartqa_vcot, VTool-R1 rows, OpenThinkIMG,
 * veRL rows, Geometry3K, GeoQA, and the visual-search benchmarks V*, HR-Bench and VisualProbe) into vistool
 * task records: DIR/tasks.jsonl + DIR/images/ (images copied). Bad input stops with a message
 * naming the file, line, field and what was expected; records converted with less than they had
 * (e.g. no bands) are listed, never silently changed.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadCharXiv } from '../tasks/loaders/charxiv.js';
import { loadChartQA } from '../tasks/loaders/chartqa.js';
import { writeConverted, type LoadResult } from '../tasks/loaders/common.js';
import { loadOpenThinkIMG } from '../tasks/loaders/openthinkimg.js';
import { loadReFocus } from '../tasks/loaders/refocus.js';
import { loadTableVqaBench } from '../tasks/loaders/tablevqa-bench.js';
import { loadVerl } from '../tasks/loaders/verl.js';
import { loadVTool } from '../tasks/loaders/vtool.js';
import { loadGeometry3K } from '../tasks/loaders/geometry3k.js';
import { loadGeoQA } from '../tasks/loaders/geoqa.js';
import { loadHrBench } from '../tasks/loaders/hrbench.js';
import { loadVisualProbe } from '../tasks/loaders/visualprobe.js';
import { loadVStar } from '../tasks/loaders/vstar.js';
import { type CliCommand, parseCommandArgs, UsageError } from './command.js';
import type { CliStreams } from './data-gen.js';

export const CONVERT_FORMATS = ['chartqa', 'charxiv', 'tablevqa-bench', 'refocus', 'vtool', 'openthinkimg', 'verl', 'geometry3k', 'geoqa', 'vstar', 'hrbench', 'visualprobe'] as const;
export type ConvertFormat = (typeof CONVERT_FORMATS)[number];

const usage = `vistool data convert --from chartqa|charxiv|tablevqa-bench|refocus|vtool|openthinkimg|verl|geometry3k|geoqa|vstar|hrbench|visualprobe SRC --out DIR [--images-root DIR] [--templates FILE]

  chartqa       SRC: a question file (test_augmented.json, ...) or its split folder,
                with png/ and annotations/ beside it
  charxiv       SRC: CharXiv's data/{reasoning,descriptive}_{val,test}.json; images from images/
                beside data/; questions templated as CharXiv's protocol does, from its
                src/constants.py (found above data/, or --templates FILE)
  tablevqa-bench SRC: one exported split (vwtq, vwtq_syn, vtabfact, fintabnetqa) as JSON or
                JSONL {qa_id, question, gt, image: path}; the split comes from the file name
  refocus       SRC: a chartqa_vcot *.jsonl, or an evaluation set with boxes:
                data/chartQA_{h,v}_bar_wbb.json, data/tablevqa*_wbb.json,
                data/charxiv-subfigures.json (figure paths from ReFocus's root)
  vtool         SRC: VTool-R1 rows as JSONL (export the parquet first; parquet is not read here)
  openthinkimg  SRC: a JSON array or JSONL of {image_path, question, solution|label}
  verl          SRC: veRL rows as JSONL {data_source, prompt, images, reward_model, extra_info}
  geometry3k    SRC: the Geometry3K release (train/, val/, test/ of <id>/data.json +
                img_diagram.png), one split folder, or one problem folder
  geoqa         SRC: GeoQA records as JSON or JSONL (the pickles exported, images as files) or
                a folder of per-problem <id>.json; images <id>.png beside them, in image/ or
                --images-root (pickles are never read)
  vstar         SRC: V* Bench's folder (direct_attributes/, relative_position/: <name>.jpg beside
                <name>.json {target_object, bbox, question, options}) or one subtask folder;
                target boxes kept in meta.targets (pixels)
  hrbench       SRC: hr_bench_4k.tsv or hr_bench_8k.tsv (VLMEvalKit TSV: index, question, answer,
                A-D, category, cycle_category, image as base64); images decoded next to tasks.jsonl
  visualprobe   SRC: Mini-o3's VisualProbe val.json / train.json ({images, doc_id, problem,
                solution, data_source}), its split folder, or the folder of VisualProbe_* folders;
                image paths from --images-root, else the folder above the split folder
  --images-root folder that relative image paths start from (default: SRC's folder)
  --out DIR     output folder: DIR/tasks.jsonl + DIR/images/`;

export async function loadFormat(format: ConvertFormat, src: string, imagesRoot: string | undefined, scratch: string, templates?: string): Promise<LoadResult> {
  switch (format) {
    case 'chartqa':
      return loadChartQA(src);
    case 'charxiv':
      return loadCharXiv(src, imagesRoot, templates);
    case 'tablevqa-bench':
      return loadTableVqaBench(src, imagesRoot);
    case 'refocus':
      return loadReFocus(src, imagesRoot);
    case 'vtool':
      return loadVTool(src, imagesRoot);
    case 'openthinkimg':
      return loadOpenThinkIMG(src, imagesRoot);
    case 'verl':
      return loadVerl(src, imagesRoot, scratch);
    case 'geometry3k':
      return loadGeometry3K(src);
    case 'geoqa':
      return loadGeoQA(src, imagesRoot);
    case 'vstar':
      return loadVStar(src);
    case 'hrbench':
      return loadHrBench(src, scratch);
    case 'visualprobe':
      return loadVisualProbe(src, imagesRoot);
  }
}

export function createDataConvertCommand(io: CliStreams = { stdout: process.stdout, stderr: process.stderr }): CliCommand {
  return {
    path: ['data', 'convert'],
    summary: 'Convert ChartQA, CharXiv, TableVQA-Bench, ReFocus, VTool-R1, OpenThinkIMG, veRL, Geometry3K, GeoQA, V*, HR-Bench or VisualProbe data into task records',
    usage,
    async run(argv) {
      const parsed = parseCommandArgs({ args: argv, options: { from: { type: 'string' }, out: { type: 'string' }, 'images-root': { type: 'string' }, templates: { type: 'string' } }, allowPositionals: true, strict: true });
      const format = parsed.values.from;
      if (!format || !CONVERT_FORMATS.includes(format as ConvertFormat)) throw new UsageError(`--from must be one of ${CONVERT_FORMATS.join(', ')}; got '${format ?? ''}'`);
      const [src, ...extra] = parsed.positionals;
      if (src === undefined || extra.length > 0) throw new UsageError('give exactly one SRC');
      if (!parsed.values.out) throw new UsageError('--out is required');
      const scratch = await mkdtemp(join(tmpdir(), 'vistool-convert-'));
      try {
        if (parsed.values.templates !== undefined && format !== 'charxiv') throw new UsageError(`--templates is for --from charxiv (CharXiv's src/constants.py); ${format} has no templates`);
        const result = await loadFormat(format as ConvertFormat, src, parsed.values['images-root'], scratch, parsed.values.templates);
        if (result.tasks.length === 0) throw new Error(`${src}: no records found`);
        const summary = await writeConverted(parsed.values.out, result);
        for (const w of summary.warnings.slice(0, 10)) io.stderr.write(`warning: ${w.where}: ${w.reason}\n`);
        if (summary.warnings.length > 10) io.stderr.write(`warning: ... and ${summary.warnings.length - 10} more\n`);
        for (const s of summary.skipped.slice(0, 10)) io.stderr.write(`skipped: ${s.where}: ${s.reason}\n`);
        io.stderr.write(`data convert: ${summary.tasks} tasks, ${summary.images} images, ${summary.warnings.length} warnings, ${summary.skipped.length} skipped → ${summary.out}\n`);
        io.stdout.write(`${JSON.stringify({ out: summary.out, tasks: summary.tasks, images: summary.images, warnings: summary.warnings.length, skipped: summary.skipped.length })}\n`);
      } finally {
        await rm(scratch, { recursive: true, force: true });
      }
      return 0;
    },
  };
}

export const dataConvertCommand = createDataConvertCommand();
