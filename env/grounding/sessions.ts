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
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
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
    const missing = cudaProviderMissing();
    if (missing) {
      process.stderr.write(`vistool ocr: CUDA execution provider not installed (${missing}); running OCR on CPU. Install it with ONNXRUNTIME_NODE_INSTALL=cuda12 npm rebuild onnxruntime-node\n`);
    } else {
      try {
        const [detection, recognition] = await Promise.all([open(models.detection, 'cuda', threads), open(models.recognition, 'cuda', threads)]);
        return { detection, recognition, classes, device: 'cuda' };
      } catch (err) {
        const reason = (err instanceof Error ? err.message : String(err)).split('\n')[0];
        process.stderr.write(`vistool ocr: CUDA execution provider unavailable (${reason}); running OCR on CPU\n`);
      }
    }
  }
  const [detection, recognition] = await Promise.all([open(models.detection, 'cpu', threads), open(models.recognition, 'cpu', threads)]);
  return { detection, recognition, classes, device: 'cpu' };
}

/**
 * Why the CUDA provider cannot load, or null when its library sits next to onnxruntime's binding.
 * Checked before trying, because a failed try makes onnxruntime print its own multi-line errors.
 */
export function cudaProviderMissing(): string | null {
  let binding: string;
  try {
    binding = dirname(require.resolve(`onnxruntime-node/bin/napi-v6/${process.platform}/${process.arch}/onnxruntime_binding.node`));
  } catch {
    return `no onnxruntime-node binary for ${process.platform}/${process.arch}`;
  }
  const library = join(binding, process.platform === 'win32' ? 'onnxruntime_providers_cuda.dll' : 'libonnxruntime_providers_cuda.so');
  return existsSync(library) ? null : `${library} is missing`;
}

function open(path: string, device: OcrDevice, threads: number): Promise<ort.InferenceSession> {
  return ort.InferenceSession.create(path, {
    executionProviders: device === 'cuda' ? ['cuda'] : ['cpu'],
    // Fatal only: a CUDA failure is reported once, by us, with the fix.
    logSeverityLevel: device === 'cuda' ? 4 : 2,
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    graphOptimizationLevel: 'all',
    executionMode: 'sequential',
    // Worker threads sleep instead of spinning between runs: the CPU is often shared (tests, trainers).
    extra: { session: { intra_op: { allow_spinning: '0' } } },
  });
}

function defaultThreads(): number {
  const fromEnv = Number(process.env.VISTOOL_OCR_THREADS);
  if (Number.isInteger(fromEnv) && fromEnv > 0) return fromEnv;
  return Math.max(1, availableParallelism());
}
