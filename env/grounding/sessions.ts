/**
 * The two ONNX Runtime sessions (text detection, text recognition), created once per process
 * and shared by every caller: creating them costs ~0.5 s, running them a few ms.
 *
 * CPU is the default. CUDA is an opt-in for users who installed onnxruntime-node's CUDA
 * binaries (`ONNXRUNTIME_NODE_INSTALL=cuda12 npm rebuild onnxruntime-node`, CUDA 12 + cuDNN 9
 * on the library path) and set `VISTOOL_OCR_DEVICE=cuda` (or pass `device: 'cuda'`). When the
 * CUDA provider cannot start, the sessions fall back to CPU with one log line on stderr; OCR
 * never fails because a GPU is missing.
 */
import { availableParallelism } from 'node:os';
import * as ort from 'onnxruntime-node';
import { ocrModelFiles, readCharacterClasses, type OcrModelFiles } from './models.js';

export type OcrDevice = 'cpu' | 'cuda';

export interface OcrSessions {
  detection: ort.InferenceSession;
  recognition: ort.InferenceSession;
  /** The recogniser's output classes: '' (CTC blank), the dictionary, then ' '. */
  classes: string[];
  /** Where the sessions actually run (after any fallback). */
  device: OcrDevice;
}

export interface SessionOptions {
  device?: OcrDevice;
  /** Threads per session; default: every core the machine reports. */
  threads?: number;
  models?: OcrModelFiles;
}

let shared: Promise<OcrSessions> | undefined;

/** The process-wide sessions, created on first use with the options of that first call. */
export function ocrSessions(options: SessionOptions = {}): Promise<OcrSessions> {
  if (!shared) {
    shared = createOcrSessions(options);
    // A failed start must not poison every later call: the next caller tries again.
    shared.catch(() => {
      shared = undefined;
    });
  }
  return shared;
}

/** Requested device: the option, else VISTOOL_OCR_DEVICE, else CPU. */
export function requestedDevice(option?: OcrDevice, env: NodeJS.ProcessEnv = process.env): OcrDevice {
  if (option) return option;
  const value = env.VISTOOL_OCR_DEVICE?.trim().toLowerCase();
  if (value === undefined || value === '' || value === 'cpu') return 'cpu';
  if (value === 'cuda' || value === 'gpu') return 'cuda';
  throw new Error(`VISTOOL_OCR_DEVICE must be "cpu" or "cuda", got "${env.VISTOOL_OCR_DEVICE}"`);
}

export async function createOcrSessions(options: SessionOptions = {}): Promise<OcrSessions> {
  const models = options.models ?? ocrModelFiles();
  const classes = readCharacterClasses(models.dictionary);
  const threads = options.threads ?? defaultThreads();
  const wanted = requestedDevice(options.device);
  if (wanted === 'cuda') {
    try {
      const [detection, recognition] = await Promise.all([open(models.detection, 'cuda', threads), open(models.recognition, 'cuda', threads)]);
      return { detection, recognition, classes, device: 'cuda' };
    } catch (err) {
      const reason = (err instanceof Error ? err.message : String(err)).split('\n')[0];
      process.stderr.write(`vistool ocr: CUDA execution provider unavailable (${reason}); running OCR on CPU\n`);
    }
  }
  const [detection, recognition] = await Promise.all([open(models.detection, 'cpu', threads), open(models.recognition, 'cpu', threads)]);
  return { detection, recognition, classes, device: 'cpu' };
}

function open(path: string, device: OcrDevice, threads: number): Promise<ort.InferenceSession> {
  return ort.InferenceSession.create(path, {
    executionProviders: device === 'cuda' ? ['cuda'] : ['cpu'],
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    graphOptimizationLevel: 'all',
    executionMode: 'sequential',
  });
}

function defaultThreads(): number {
  const fromEnv = Number(process.env.VISTOOL_OCR_THREADS);
  if (Number.isInteger(fromEnv) && fromEnv > 0) return fromEnv;
  return Math.max(1, availableParallelism());
}
