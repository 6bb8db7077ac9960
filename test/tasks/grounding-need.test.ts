import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PHOTOGRAPH_SOURCES, whyNoGrounding } from '../../env/tasks/grounding-need.js';

test('diagrams, search scenes and the visual-search benchmarks\' photographs are never grounded; charts and tables may be', () => {
  assert.match(whyNoGrounding({ kind: 'geometry', source: 'synthetic' }) ?? '', /labelled points/);
  assert.match(whyNoGrounding({ kind: 'search', source: 'synthetic' }) ?? '', /boxes in the scene/);
  // The loaders' own source strings (env/tasks/loaders/vstar.ts, hrbench.ts, visualprobe.ts).
  for (const source of ['vstar/direct_attributes', 'vstar/relative_position', 'hrbench/4k', 'hrbench', 'visualprobe/hard']) {
    assert.match(whyNoGrounding({ kind: 'chart', source }) ?? '', /photograph's tools take boxes/, source);
  }
  assert.deepEqual([...PHOTOGRAPH_SOURCES], ['vstar', 'hrbench', 'visualprobe']);
  // A chart without bands from ChartQA or ReFocus, a client's image, a generated chart: OCR may find its bands.
  for (const [kind, source] of [['chart', 'chartqa'], ['chart', 'refocus/charxiv'], ['chart', 'client'], ['vbar', 'synthetic'], ['table', 'refocus/tablevqa'], ['chart', 'vstarlike']] as const) {
    assert.equal(whyNoGrounding({ kind, source }), null, `${kind} ${source}`);
  }
});
