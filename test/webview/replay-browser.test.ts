/**
 * The rollout viewer's "Replay without the tool's result" in a browser, on a training run recorded
 * through the engine (test/view/training-replay-run.ts): served by a host given a policy (the
 * scripted OpenAI-compatible server of the eval tests, the one stand-in: a served model is an
 * external process), the button is on a rollout whose call ran and not on one without a call, and
 * a click shows the replay's answer beside the recorded one, changed, wrong — an answer holding
 * markup shown as text, running nothing. Served without a policy, and in a static bundle from
 * file://, the button is there but disabled, saying why. Light and dark themes.
 *
 * The scripted policy answers with markup whenever the last image it is sent is the task image,
 * which is what a replay sends after the withheld call: the expected answer is that text, and the
 * recorded answer is the task's gold (the recording policy saw the edit), read from the run's files.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { writeBundle } from '../../env/view/bundle.js';
import { parseReplayPolicy } from '../../env/view/replay-policy.js';
import { startScriptedChatServer, type ScriptedChatServer, type SeenRequest } from '../eval/scripted-chat-server.js';
import { goldText, taskOf } from '../eval/scripted-model.js';
import { writeTrainingReplayRun, type TrainingReplayRun } from '../view/training-replay-run.js';
import { ASSETS, ensureBundles, launchBrowser, openPage, screenshot, startView, type ViewSession } from './browser-harness.js';

/** What the served policy answers without the edit: markup that would run if it were set as HTML. */
const HOSTILE_REPLY_ANSWER = `<img src=x onerror="window.__xss='replay'"> & <b>Atlantis</b>`;

let browser: Browser;
let run: TrainingReplayRun;
let policyServer: ScriptedChatServer;
let withPolicy: ViewSession;
let withoutPolicy: ViewSession;
let bundleDir: string;

before(async () => {
  const root = await mkdtemp(join(tmpdir(), 'vistool-replay-browser-'));
  [run] = await Promise.all([writeTrainingReplayRun(join(root, 'train-run')), ensureBundles()]);
  policyServer = await startScriptedChatServer((request: SeenRequest) => {
    const edited = request.images.length > 1 && request.images[request.images.length - 1] !== request.images[0];
    return { text: `<answer>${edited ? goldText(taskOf(request, run.data)) : HOSTILE_REPLY_ANSWER}</answer>`, delayMs: 150 };
  });
  browser = await launchBrowser();
  withPolicy = await startView([run.dir], [], { replayPolicy: { policy: parseReplayPolicy(`openai:${policyServer.url}#served-checkpoint`) } });
  withoutPolicy = await startView([run.dir]);
  bundleDir = join(root, 'bundle');
  await writeBundle([run.dir], bundleDir, ASSETS);
});

after(async () => {
  await browser?.close();
  await withPolicy?.stop();
  await withoutPolicy?.stop();
  await policyServer?.close();
});

const THEMES = ['light', 'dark'] as const;

for (const theme of THEMES) {
  test(`viewer (served with a policy, ${theme}): a training rollout's replay without the tool's result shows its answer as text beside the recorded one`, async () => {
    const record = run.records[0];
    const task = run.data.tasks.find((t) => t.id === record?.prompt_id);
    assert.ok(record && task);
    const asked = policyServer.requests.length;
    const { page, problems } = await openPage(browser, withPolicy.url('viewer', `&theme=${theme}&run=train-run&step=1&line=0`));
    const rollout = page.locator('[data-testid=rollout]');
    await rollout.waitFor();
    const go = rollout.locator('[data-testid=withheld-replay-button]');
    assert.equal(await go.count(), 1);
    assert.equal(await go.getAttribute('disabled'), null);
    assert.match((await go.getAttribute('title')) ?? '', new RegExp(`go on greedily`));
    assert.equal(policyServer.requests.length, asked, 'nothing is replayed before the click');

    await go.click();
    await rollout.locator('[data-testid=withheld-replay-running]').waitFor();
    const replayed = rollout.locator('[data-testid=withheld-replay]');
    await replayed.waitFor();
    assert.equal(policyServer.requests.length, asked + 1, 'one greedy continuation after the forced call');
    assert.equal(await replayed.locator('[data-testid=withheld-replay-answer]').innerText(), HOSTILE_REPLY_ANSWER);
    assert.equal(await replayed.locator('[data-testid=withheld-replay-recorded]').innerText(), goldText(task));
    assert.equal(await replayed.getAttribute('data-changed'), 'true');
    assert.equal((await replayed.locator('[data-testid=withheld-replay-changed]').innerText()).trim(), 'changed');
    assert.equal((await replayed.locator('[data-testid=withheld-replay-correct]').innerText()).trim(), 'incorrect');
    assert.equal(await replayed.locator('[data-testid=withheld-replay-opening]').count(), 0, 'the replay opened as the recorded episode did');
    // Shown as text: no element came from the answer, and nothing ran.
    assert.equal(await replayed.locator('img, b, script').count(), 0);
    assert.equal(await page.evaluate(() => (window as { __xss?: unknown }).__xss), undefined);
    // Beside the recorded answer: in the summary, after the outcome line.
    assert.equal(await rollout.locator('.rollout-summary > .outcome + [data-testid=withheld-replay-section] [data-testid=withheld-replay]').count(), 1);
    await screenshot(page, `replay-withheld-served-${theme}`);

    // The rollout that answered at once has nothing to withhold: no button.
    await page.locator('[data-testid=rollout-row][data-line="2"]').click();
    await page.locator('[data-testid=rollout][data-prompt="' + run.records[2]?.prompt_id + '"]').waitFor();
    assert.equal(await page.locator('[data-testid=withheld-replay-button]').count(), 0);
    // Back on the first, the replay asked in this page is shown again, not asked again.
    await page.locator('[data-testid=rollout-row][data-line="0"]').click();
    await page.locator('[data-testid=withheld-replay]').waitFor();
    assert.equal(policyServer.requests.length, asked + 1);
    assert.deepEqual(problems, []);
  });
}

for (const theme of THEMES) {
  test(`viewer (served without a policy, and a static bundle; ${theme}): the button is disabled and says why`, async () => {
    const places = [
      { where: 'served', url: withoutPolicy.url('viewer', `&theme=${theme}&run=train-run&step=1&line=0`), reason: /no policy to replay with: give --policy openai:<url>#<model>/ },
      { where: 'bundle', url: `file://${bundleDir}/viewer.html?theme=${theme}&run=train-run&step=1&line=0`, reason: /static bundle/ },
    ];
    for (const place of places) {
      const asked = policyServer.requests.length;
      const { page, problems } = await openPage(browser, place.url);
      const rollout = page.locator('[data-testid=rollout]');
      await rollout.waitFor();
      const go = rollout.locator('[data-testid=withheld-replay-button]');
      assert.equal(await go.count(), 1, place.where);
      assert.equal(await go.getAttribute('disabled'), '', `${place.where}: disabled`);
      assert.equal(await go.getAttribute('aria-disabled'), 'true');
      assert.match((await go.getAttribute('title')) ?? '', place.reason, place.where);
      assert.match(await rollout.locator('[data-testid=withheld-replay-unavailable]').innerText(), place.reason, `${place.where}: the reason is on the page`);
      await go.click({ force: true });
      assert.equal(await rollout.locator('[data-testid=withheld-replay], [data-testid=withheld-replay-running]').count(), 0, `${place.where}: a click does nothing`);
      assert.equal(policyServer.requests.length, asked);
      await screenshot(page, `replay-withheld-${place.where}-unavailable-${theme}`);
      assert.deepEqual(problems, [], place.where);
      await page.context().close();
    }
  });
}
