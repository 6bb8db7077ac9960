import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import type { Browser } from 'playwright-core';
import { displayZoom } from '../../webview/playground/display-zoom.js';
import { tableFixture } from '../fixtures/render.js';
import { ensureBundles, launchBrowser, openPage, screenshot, startView, type ViewSession } from './browser-harness.js';

let browser: Browser;
let view: ViewSession;
let dir: string;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'vistool-playground-browser-'));
  await ensureBundles();
  browser = await launchBrowser();
  view = await startView([], [dir]);
});

after(async () => {
  await browser?.close();
  await view?.stop();
});

test('small images are shown scaled up by a whole factor, usual ones as they are', () => {
  assert.equal(displayZoom(112, 112), 4);
  assert.equal(displayZoom(224, 112), 2);
  assert.equal(displayZoom(300, 200), 1);
  assert.equal(displayZoom(1600, 1200), 1);
  assert.equal(displayZoom(0, 0), 1);
});

test('metadata chosen after the image reopens it with the bands, the status says where they came from, and a 112 px image shows at 448 px', async () => {
  const fixture = await tableFixture();
  // The table at 112 px wide (as the micro model sees its images), with its bands scaled to match.
  const scale = 112 / fixture.image.width;
  const height = Math.round(fixture.image.height * scale);
  const small = await sharp(fixture.png).resize(112, height, { fit: 'fill' }).png().toBuffer();
  const scaleBox = (b: { x1: number; y1: number; x2: number; y2: number }) => ({ x1: Math.floor(b.x1 * scale), y1: Math.floor(b.y1 * scale), x2: Math.ceil(b.x2 * scale), y2: Math.ceil(b.y2 * scale) });
  const meta = { unit: 'pixels', columns_bbox: Object.fromEntries(Object.entries(fixture.meta.columns_bbox ?? {}).map(([k, b]) => [k, scaleBox(b)])) };
  await writeFile(join(dir, 'small.png'), small);
  await writeFile(join(dir, 'small-meta.json'), JSON.stringify(meta));
  const { page, problems } = await openPage(browser, view.url('playground'));
  await page.locator('[data-testid=image-input]').setInputFiles(join(dir, 'small.png'));
  await page.locator('[data-testid=stage] img').first().waitFor();
  // Without metadata the columns come from OCR grounding, or there are none: either way not the file's.
  const before = await page.locator('[data-testid=metadata-source]').innerText();
  assert.doesNotMatch(before, /small-meta\.json/);
  await page.locator('[data-testid=metadata-input]').setInputFiles(join(dir, 'small-meta.json'));
  await page.waitForFunction(() => /small-meta\.json/.test(document.querySelector('[data-testid=metadata-source]')?.textContent ?? ''));
  assert.match(await page.locator('[data-testid=playground-message]').innerText(), /^Opened small\.png with metadata from uploaded small-meta\.json\.$/);
  assert.doesNotMatch(await page.locator('[data-testid=playground-message]').innerText(), /OCR/);
  // Shown at 4×, pixels kept square.
  assert.equal(await page.locator('[data-testid=stage]').getAttribute('data-zoom'), '4');
  await page.waitForFunction(() => (document.querySelector('[data-testid=stage] img') as HTMLImageElement | null)?.naturalWidth === 112);
  const shownWidth = await page.locator('[data-testid=stage] img').first().evaluate((img) => img.getBoundingClientRect().width);
  assert.equal(Math.round(shownWidth), 448);
  assert.equal(await page.locator('[data-testid=stage] img').first().evaluate((img) => getComputedStyle(img).imageRendering), 'pixelated');
  assert.match(await page.locator('.stage-title').innerText(), /112×\d+ shown at 400%/);
  await screenshot(page, 'playground-small-image');
  assert.deepEqual(problems, []);
});
