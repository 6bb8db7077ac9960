/**
 * The twelve band tools against ReFocus's exact geometry: test/tools/refocus_reference.py paints
 * each band as ReFocus does (normalised boxes, int() truncation, Pillow's inclusive rectangle)
 * and vistool must give the same bytes, pixel for pixel. Needs a Python with Pillow (the repo's
 * .venv, which `make test` builds); without one the test says so and skips.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bandKey, resolveMetadata, type BandFamily, type BBox } from '../../env/tools/metadata.js';
import { runToolCall } from '../../env/tools/registry.js';
import { horizontalBarsFixture, tableFixture, verticalBarsFixture, type Fixture } from '../fixtures/render.js';

const PYTHON = join(__dirname, '..', '..', '.venv', 'bin', 'python');
const hasPillow = existsSync(PYTHON) && spawnSync(PYTHON, ['-c', 'import PIL'], { encoding: 'utf8' }).status === 0;

const CASES: { family: BandFamily; fixture: () => Promise<Fixture>; selections: string[][] }[] = [
  { family: 'columns', fixture: tableFixture, selections: [['Country', 'Wins'], ['Rider']] },
  { family: 'rows', fixture: tableFixture, selections: [['Hinault'], ['Merckx', 'Anquetil']] },
  { family: 'x_values', fixture: verticalBarsFixture, selections: [['2020'], ['2019', '2021']] },
  { family: 'y_values', fixture: horizontalBarsFixture, selections: [['Spain'], ['Spain', 'France']] },
];

test("all twelve band tools paint exactly ReFocus's pixels on the project's fixtures", { skip: !hasPillow && 'no .venv Python with Pillow (run make venv)' }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'vistool-refocus-'));
  const jobs: { image: string; bands: Record<string, BBox>; mode: string; selected: string[]; out: string; ours: Buffer; name: string }[] = [];
  for (const c of CASES) {
    const fixture = await c.fixture();
    const { width, height } = fixture.image;
    const imagePath = join(dir, `${c.family}.png`);
    writeFileSync(imagePath, fixture.png);
    const pixels = fixture.meta[bandKey(c.family)] as Record<string, BBox>;
    // ReFocus keeps boxes normalised; vistool reads the same numbers with unit "normalized".
    const bands = Object.fromEntries(Object.entries(pixels).map(([label, b]) => [label, { x1: b.x1 / width, y1: b.y1 / height, x2: b.x2 / width, y2: b.y2 / height }]));
    const meta = resolveMetadata({ unit: 'normalized', [bandKey(c.family)]: bands }, width, height);
    for (const mode of ['mask', 'draw', 'highlight'] as const) {
      for (const selected of c.selections) {
        for (const label of selected) assert.ok(label in bands, `${label} is a ${c.family} label of the fixture`);
        const name = `focus_on_${c.family}_with_${mode}`;
        const outcome = await runToolCall(fixture.image, { name, arguments: { [c.family]: selected } }, meta);
        assert.ok(outcome.ok, `${name} ${JSON.stringify(selected)}: ${JSON.stringify(outcome.ok ? '' : outcome.error)}`);
        if (!outcome.ok) continue;
        jobs.push({ image: imagePath, bands, mode, selected, out: join(dir, `${jobs.length}.rgb`), ours: outcome.image.data, name: `${name} ${selected.join('+')}` });
      }
    }
  }
  const run = spawnSync(PYTHON, [join(__dirname, 'refocus_reference.py')], { input: JSON.stringify(jobs.map(({ ours: _ours, name: _name, ...job }) => job)), encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  assert.equal(new Set(jobs.map((j) => j.name.split(' ')[0])).size, 12, 'every one of the twelve tools ran');
  for (const job of jobs) {
    const theirs = readFileSync(job.out);
    assert.equal(theirs.length, job.ours.length, job.name);
    let differing = 0;
    for (let i = 0; i < theirs.length; i += 3) if (theirs[i] !== job.ours[i] || theirs[i + 1] !== job.ours[i + 1] || theirs[i + 2] !== job.ours[i + 2]) differing++;
    assert.equal(differing, 0, `${job.name}: ${differing} pixels differ from ReFocus's`);
  }
});
