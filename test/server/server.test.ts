/* eslint-disable @typescript-eslint/no-explicit-any -- the server's JSON answers are read loosely here; their shapes are what the assertions check */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, writeFile, symlink, readFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { EnvServer } from '../../env/server/server.js';
import { headerOnlyPng } from '../fixtures/header-only-png.js';
import { createScorer } from '../../env/server/scorer.js';
import { contentHash, decodeImage } from '../../env/core/image.js';
import type { TaskRecord } from '../../env/tasks/record.js';

/** A 3-column table drawn with sharp, its column bands known exactly. */
async function writeTable(dir: string): Promise<TaskRecord> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="300" height="120">
    <rect width="300" height="120" fill="white"/>
    <g font-family="DejaVu Sans" font-size="14" fill="black">
      <text x="10" y="25">Rider</text><text x="110" y="25">Country</text><text x="210" y="25">Wins</text>
      <text x="10" y="65">Merckx</text><text x="110" y="65">Belgium</text><text x="210" y="65">5</text>
      <text x="10" y="105">Hinault</text><text x="110" y="105">France</text><text x="210" y="105">2</text>
    </g>
    <rect x="0" y="0" width="300" height="120" fill="none" stroke="black" stroke-width="2"/>
  </svg>`;
  await mkdir(join(dir, 'images'), { recursive: true });
  await sharp(Buffer.from(svg)).png().toFile(join(dir, 'images', 'table.png'));
  return {
    id: 'table-1',
    image: 'images/table.png',
    question: 'How many wins does Merckx have?',
    answer: '5',
    kind: 'table',
    difficulty: 1,
    source: 'test',
    meta: {
      unit: 'pixels',
      columns_bbox: {
        Rider: { x1: 0, y1: 0, x2: 100, y2: 120 },
        Country: { x1: 100, y1: 0, x2: 200, y2: 120 },
        Wins: { x1: 200, y1: 0, x2: 300, y2: 120 },
      },
      rows_bbox: {
        Merckx: { x1: 0, y1: 40, x2: 300, y2: 80 },
        Hinault: { x1: 0, y1: 80, x2: 300, y2: 120 },
      },
    },
  };
}

let root: string;
let task: TaskRecord;
let server: EnvServer;
let url: string;
const token = 'test-token-0123456789';

before(async () => {
  root = await mkdtemp(join(tmpdir(), 'vistool-server-'));
  task = await writeTable(root);
  server = new EnvServer({ token, root, imagesDir: join(root, 'run', 'images'), scorer: createScorer(undefined), log: () => {}, idleTimeoutMs: 60_000 });
  url = await server.start();
});

after(async () => {
  await server.stop();
});

async function call(method: string, path: string, body?: unknown, auth = token): Promise<{ status: number; json: Record<string, any> }> {
  const res = await fetch(url + path, {
    method,
    headers: { authorization: `Bearer ${auth}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  return { status: res.status, json: (await res.json()) as Record<string, any> };
}

test('the server listens on loopback only', () => {
  assert.match(url, /^http:\/\/127\.0\.0\.1:\d+$/);
});

test('every endpoint refuses a request without the right token', async () => {
  for (const [method, path] of [['GET', '/v1/health'], ['GET', '/v1/tools'], ['POST', '/v1/episodes'], ['POST', '/v1/episodes/x/step'], ['DELETE', '/v1/episodes/x']] as const) {
    const wrong = await call(method, path, method === 'POST' ? {} : undefined, 'wrong');
    assert.equal(wrong.status, 401, `${method} ${path}`);
    const none = await fetch(url + path, { method });
    assert.equal(none.status, 401);
  }
});

test('health and tools answer', async () => {
  const health = await call('GET', '/v1/health');
  assert.equal(health.status, 200);
  assert.equal(health.json.status, 'ok');
  const tools = await call('GET', '/v1/tools');
  assert.ok(tools.json.names.includes('focus_on_columns_with_mask'));
  assert.equal(tools.json.tools[0].type, 'function');
});

test('an episode masks columns on real pixels, then answers and scores correct', async () => {
  const created = await call('POST', '/v1/episodes', { task, task_dir: root });
  assert.equal(created.status, 200, JSON.stringify(created.json));
  const [system, user] = created.json.observation.messages;
  assert.equal(system.role, 'system');
  assert.match(system.content[0].text, /focus_on_columns_with_mask/);
  const image = user.content.find((p: any) => p.type === 'image');
  assert.equal(contentHash(await readFile(image.path)), image.ref);
  const id = created.json.episode_id;

  const step = await call('POST', `/v1/episodes/${id}/step`, {
    text: 'I need the wins. <tool_call>{"name": "focus_on_columns_with_mask", "arguments": {"columns": ["Rider", "Wins"]}}</tool_call>',
  });
  assert.equal(step.status, 200, JSON.stringify(step.json));
  assert.equal(step.json.done, false);
  assert.equal(step.json.info.calls[0].ok, true);
  const edited = step.json.observation.messages[0].content.find((p: any) => p.type === 'image');
  const pixels = await decodeImage(edited.path);
  // The Country column (x 100..200, y 0..120, inset 2 px) is pure white; the Rider column kept its ink.
  let countryInk = 0;
  let riderInk = 0;
  for (let y = 0; y < pixels.height; y++) {
    for (let x = 0; x < pixels.width; x++) {
      const i = (y * pixels.width + x) * 3;
      const dark = pixels.data[i]! < 128;
      if (x >= 102 && x < 198 && y >= 2 && y < 118 && dark) countryInk++;
      if (x >= 2 && x < 98 && y > 2 && y < 118 && dark) riderInk++;
    }
  }
  assert.equal(countryInk, 0);
  assert.ok(riderInk > 50);

  const answer = await call('POST', `/v1/episodes/${id}/step`, { text: 'Merckx has <answer>5</answer>' });
  assert.equal(answer.json.done, true);
  assert.equal(answer.json.info.answer, '5');
  const score = await call('POST', `/v1/episodes/${id}/score`);
  assert.equal(score.status, 200);
  assert.equal(score.json.correct, true);
  assert.ok(score.json.reward > 0);
  const again = await call('POST', `/v1/episodes/${id}/step`, { text: '<answer>6</answer>' });
  assert.equal(again.status, 409);
  const trajectory = await call('GET', `/v1/episodes/${id}`);
  assert.equal(trajectory.json.tool_calls, 1);
  assert.deepEqual(trajectory.json.turns.map((t: any) => t.role), ['assistant', 'tool', 'assistant']);
  assert.equal((await call('DELETE', `/v1/episodes/${id}`)).json.closed, true);
  assert.equal((await call('GET', `/v1/episodes/${id}`)).status, 404);
});

test('a bad call becomes an error observation the model can read', async () => {
  const { json } = await call('POST', '/v1/episodes', { task, task_dir: root });
  const step = await call('POST', `/v1/episodes/${json.episode_id}/step`, { call: { name: 'focus_on_columns_with_mask', arguments: { columns: ['Wins '.repeat(2)] } } });
  assert.equal(step.status, 200);
  assert.equal(step.json.info.calls[0].ok, false);
  assert.equal(step.json.info.errors[0].class, 'E4');
  assert.match(step.json.observation.messages[0].content[0].text, /^ERROR \[E4\]/);
});

test('the text-only arm offers no tools and refuses calls', async () => {
  const { json } = await call('POST', '/v1/episodes', { task, task_dir: root, options: { tools: false } });
  assert.deepEqual(json.tools, []);
  assert.doesNotMatch(json.observation.messages[0].content[0].text, /focus_on_columns/);
  const step = await call('POST', `/v1/episodes/${json.episode_id}/step`, { text: '<tool_call>{"name": "zoom_in", "arguments": {"bbox": [0,0,50,50]}}</tool_call>' });
  assert.equal(step.json.info.errors[0].class, 'E1');
});

test('bad input gets a clear 4xx', async () => {
  const malformed = await call('POST', '/v1/episodes', '{"task": ');
  assert.equal(malformed.status, 400);
  assert.match(malformed.json.error.message, /not valid JSON/);
  assert.equal((await call('POST', '/v1/episodes/nope/step', { text: 'hi' })).status, 404);
  assert.equal((await call('GET', '/v1/nothing')).status, 404);
  const noTask = await call('POST', '/v1/episodes', {});
  assert.equal(noTask.status, 400);
  const badTask = await call('POST', '/v1/episodes', { task: { ...task, difficulty: 'hard' } });
  assert.equal(badTask.status, 400);
  assert.match(badTask.json.error.message, /difficulty/);
  const badStep = await call('POST', `/v1/episodes/${(await call('POST', '/v1/episodes', { task, task_dir: root })).json.episode_id}/step`, { foo: 1 });
  assert.equal(badStep.status, 400);
});

test('every option is checked against the API: an enum outside openapi.json, a non-boolean or a non-object is a 400 naming it', async () => {
  const health = await call('GET', '/v1/health');
  const probes: [unknown, RegExp][] = [
    [{ images: '../../x' }, /options.images must be one of "path", "inline", got "..\/..\/x"/],
    [{ images: 'INLINE' }, /options.images must be one of/],
    [{ images: 1 }, /options.images must be one of/],
    [{ tools: 'no' }, /options.tools must be true or false, got "no"/],
    [{ withhold_results: 'yes' }, /options.withhold_results must be true or false, got "yes"/],
    [{ pixel_bounds: 1003520 }, /options.pixel_bounds must be an object such as \{"min_pixels": 3136, "max_pixels": 1003520\}, got 1003520/],
    [{ pixel_bounds: { max_pixels: 1003520 } }, /options.pixel_bounds: min_pixels and max_pixels must be numbers/],
    [{ pixel_bounds: { min_pixels: 3136, max_pixels: 100 } }, /options.pixel_bounds: max_pixels 100 is under one image token/],
    [{ pixel_bounds: { min_pixels: 3136, max_pixels: 1003520, patch: 14 } }, /options.pixel_bounds has unknown key\(s\) patch/],
    ['tools', /options must be a JSON object/],
    [[1], /options must be a JSON object/],
  ];
  for (const [options, message] of probes) {
    const res = await call('POST', '/v1/episodes', { task, task_dir: root, options });
    assert.equal(res.status, 400, JSON.stringify(options));
    assert.match(res.json.error.message, message);
  }
  assert.equal((await call('GET', '/v1/health')).json.episodes, health.json.episodes, 'a refused request starts no episode');
  const bounded = await call('POST', '/v1/episodes', { task, task_dir: root, options: { pixel_bounds: { min_pixels: 3136, max_pixels: 1003520 } } });
  assert.equal(bounded.status, 200);
  const inline = await call('POST', '/v1/episodes', { task, task_dir: root, options: { images: 'inline', tools: true } });
  assert.equal(inline.status, 200);
  assert.ok(inline.json.observation.messages.some((m: any) => m.content.some((part: any) => typeof part.data === 'string')));
});

test('an episode started with pixel_bounds reads crop boxes in the image shown under those bounds, one without them under Qwen2.5-VL\'s defaults', async () => {
  // A 560×560 search image (313,600 px). Under max_pixels 78,400 (100 tokens of 28×28) smart_resize
  // shows it at 280×280 (β = √(313,600 / 78,400) = 2, ⌊560 / 2 / 28⌋·28 = 280); under the defaults
  // (3,136 / 12,845,056) at 560×560, as it is. So the box [0, 0, 140, 140] is native
  // [0, 0, 280, 280] (280² = 78,400 px, not resized) under the small bounds and [0, 0, 140, 140] without.
  const side = 560;
  const pixels = Buffer.alloc(side * side * 3);
  for (let i = 0; i < side * side; i++) pixels.set([i % side & 255, Math.floor(i / side) & 255, 128], i * 3);
  await sharp(pixels, { raw: { width: side, height: side, channels: 3 } }).png().toFile(join(root, 'images', 'search.png'));
  const search = { id: 'search-1', image: 'images/search.png', question: 'What is in the corner?', answer: 'x', kind: 'search', difficulty: 1, source: 'test', meta: { unit: 'pixels' } };
  const cropped = async (options: Record<string, unknown>): Promise<[number, number]> => {
    const started = await call('POST', '/v1/episodes', { task: search, task_dir: root, options });
    assert.equal(started.status, 200, JSON.stringify(started.json));
    assert.deepEqual(started.json.tool_names, ['crop']);
    const step = await call('POST', `/v1/episodes/${started.json.episode_id}/step`, { text: '<tool_call>{"name": "crop", "arguments": {"bbox": [0, 0, 140, 140]}}</tool_call>' });
    assert.equal(step.status, 200);
    const image = step.json.observation.messages.at(-1).content.find((p: any) => p.type === 'image');
    assert.ok(image, JSON.stringify(step.json.observation.messages));
    const shown = await decodeImage(image.path);
    assert.equal(shown.data[(139 * shown.width + 139) * 3], 139, 'the crop starts at the native origin');
    return [shown.width, shown.height];
  };
  assert.deepEqual(await cropped({ pixel_bounds: { min_pixels: 3136, max_pixels: 78_400 } }), [280, 280]);
  assert.deepEqual(await cropped({}), [140, 140]);
});

test('image paths outside the root are refused: .., absolute, symlink out', async () => {
  for (const image of ['../../../etc/passwd', '/etc/passwd', 'images/../../outside.png']) {
    const res = await call('POST', '/v1/episodes', { task: { ...task, image }, task_dir: root });
    assert.equal(res.status, 400, image);
    assert.match(res.json.error.message, /outside the allowed root|does not exist/);
  }
  const outside = await mkdtemp(join(tmpdir(), 'vistool-outside-'));
  await writeFile(join(outside, 'secret.png'), await readFile(join(root, 'images', 'table.png')));
  await symlink(join(outside, 'secret.png'), join(root, 'images', 'link.png'));
  const linked = await call('POST', '/v1/episodes', { task: { ...task, image: 'images/link.png' }, task_dir: root });
  assert.equal(linked.status, 400);
  assert.match(linked.json.error.message, /symbolic link/);
  const dirOutside = await call('POST', '/v1/episodes', { task, task_dir: outside });
  assert.equal(dirOutside.status, 400);
});

test('a huge body is refused with 413', async () => {
  const res = await call('POST', '/v1/episodes', { task, pad: 'x'.repeat(9 * 1024 * 1024) });
  assert.equal(res.status, 413);
});

test('batch endpoints start, step and score many episodes, reporting failed items in place', async () => {
  const items = Array.from({ length: 16 }, () => ({ task, task_dir: root }));
  items.push({ task: { ...task, image: '../x.png' }, task_dir: root });
  const created = await call('POST', '/v1/batch/episodes', { items });
  assert.equal(created.json.results.length, 17);
  assert.equal(created.json.results[16].error.status, 400);
  const ids: string[] = created.json.results.slice(0, 16).map((r: any) => r.episode_id);
  const stepped = await call('POST', '/v1/batch/step', { items: ids.map((episode_id, i) => ({ episode_id, text: `<answer>${i % 2 === 0 ? 5 : 7}</answer>` })) });
  assert.ok(stepped.json.results.every((r: any) => r.done === true));
  const scored = await call('POST', '/v1/batch/score', { items: ids.map((episode_id) => ({ episode_id })) });
  assert.deepEqual(scored.json.results.map((r: any) => r.correct), ids.map((_, i) => i % 2 === 0));
});

test('batch/gold answers each task with its gold turns as SFT trains on them, and a bad item in place', async () => {
  const gold = [{ name: 'focus_on_columns_with_mask', arguments: { columns: ['Rider', 'Wins'] } }, { name: 'focus_on_rows_with_draw', arguments: { rows: ['Merckx'] } }];
  const answered = await call('POST', '/v1/batch/gold', { items: [{ task: { ...task, gold } }, { task: { ...task, answer: ['5', '2'] } }, { task: { id: 'no-image' } }, 'nonsense'] });
  assert.equal(answered.status, 200);
  const [first, second, missing, nonsense] = answered.json.results;
  assert.deepEqual(first, {
    tool_turns: [
      '<tool_call>{"name": "focus_on_columns_with_mask", "arguments": {"columns": ["Rider", "Wins"]}}</tool_call>',
      '<tool_call>{"name": "focus_on_rows_with_draw", "arguments": {"rows": ["Merckx"]}}</tool_call>',
    ],
    answer: '<answer>5</answer>',
    user_text: 'Question: How many wins does Merckx have?',
  });
  assert.deepEqual(second, { tool_turns: [], answer: '<answer>5||2</answer>', user_text: 'Question: How many wins does Merckx have?' });
  assert.equal(missing.error.status, 400);
  assert.match(missing.error.message, /image/);
  assert.equal(nonsense.error.status, 400);
});

test('concurrent steps on one episode are applied one after another', async () => {
  const { json } = await call('POST', '/v1/episodes', { task, task_dir: root });
  const path = `/v1/episodes/${json.episode_id}/step`;
  const results = await Promise.all([1, 2, 3].map(() => call('POST', path, { text: 'thinking, no call yet' })));
  assert.deepEqual(results.map((r) => r.json.info.turn).sort(), [1, 2, 3]);
});

test('stop() lets in-flight requests finish', async () => {
  const own = new EnvServer({ token, root, imagesDir: join(root, 'run2', 'images'), scorer: createScorer(undefined), log: () => {} });
  const ownUrl = await own.start();
  const pending = fetch(ownUrl + '/v1/batch/episodes', {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
    body: JSON.stringify({ items: Array.from({ length: 40 }, () => ({ task, task_dir: root })) }),
  });
  while (own.inFlightRequests === 0) await new Promise((r) => setTimeout(r, 1));
  await own.stop();
  const res = await pending;
  assert.equal(res.status, 200);
  const body = (await res.json()) as { results: unknown[] };
  assert.equal(body.results.length, 40);
});

test('idle episodes expire', async () => {
  const own = new EnvServer({ token, root, imagesDir: join(root, 'run3', 'images'), scorer: createScorer(undefined), log: () => {}, idleTimeoutMs: 300 });
  const ownUrl = await own.start();
  const res = await fetch(ownUrl + '/v1/episodes', { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: JSON.stringify({ task, task_dir: root }) });
  const { episode_id } = (await res.json()) as { episode_id: string };
  assert.equal(own.liveEpisodes, 1);
  await new Promise((r) => setTimeout(r, 900));
  assert.equal(own.liveEpisodes, 0);
  const gone = await fetch(`${ownUrl}/v1/episodes/${episode_id}`, { headers: { authorization: `Bearer ${token}` } });
  assert.equal(gone.status, 404);
  await own.stop();
});

test('a server with two data roots reads images from each and refuses their common parent', async () => {
  const parent = await mkdtemp(join(tmpdir(), 'vistool-roots-'));
  const trainDir = join(parent, 'a', 'train');
  const evalDir = join(parent, 'b', 'eval');
  const elsewhere = join(parent, 'c');
  for (const dir of [trainDir, evalDir, elsewhere]) await writeTable(dir);
  const twoRoots = new EnvServer({ token, root: trainDir, moreRoots: [evalDir], imagesDir: join(parent, 'run', 'images'), scorer: createScorer(undefined), log: () => {} });
  const base = await twoRoots.start();
  try {
    const start = async (taskDir: string, image = task.image) => {
      const res = await fetch(`${base}/v1/episodes`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ task: { ...task, image }, task_dir: taskDir }),
      });
      return { status: res.status, json: (await res.json()) as Record<string, any> };
    };
    assert.equal((await start(trainDir)).status, 200);
    assert.equal((await start(evalDir)).status, 200);
    const outside = await start(elsewhere);
    assert.equal(outside.status, 400);
    assert.match(outside.json.error.message, /outside the allowed roots/);
    assert.ok(outside.json.error.message.includes(trainDir) && outside.json.error.message.includes(evalDir));
    // Climbing from one root into a sibling of the other is refused as well.
    assert.equal((await start(trainDir, '../../c/images/table.png')).status, 400);
    assert.equal((await start(evalDir, '../../a/train/images/table.png')).status, 200, 'a path into the other root is inside it');
  } finally {
    await twoRoots.stop();
  }
});

test('a task image over the pixel limit is a 413 from its header, and the server stays healthy', async () => {
  // IHDR says 16000×16000; the file is 68 bytes, so only a header check can name the size.
  const png = headerOnlyPng(16000, 16000);
  await writeFile(join(root, 'images', 'huge.png'), png);
  const res = await call('POST', '/v1/episodes', { task: { ...task, id: 'huge', image: 'images/huge.png' }, task_dir: root });
  assert.equal(res.status, 413);
  assert.match(res.json.error.message, /huge: images\/huge.png: image is 16000×16000 = 256000000 pixels, over the limit of 4000000/);
  const inline = await call('POST', '/v1/episodes', { task: { ...task, id: 'huge-inline' }, image_data: png.toString('base64') });
  assert.equal(inline.status, 413);
  assert.equal((await call('GET', '/v1/health')).json.status, 'ok');
});

test('a minimal task record (id, image, question, answer) starts an episode; the rest gets its documented default', async () => {
  const minimal = { id: 'minimal', image: task.image, question: task.question, answer: task.answer };
  const res = await call('POST', '/v1/episodes', { task: minimal, task_dir: root });
  assert.equal(res.status, 200, JSON.stringify(res.json));
  assert.ok(res.json.episode_id);
  const withMeta = await call('POST', '/v1/episodes', { task: { ...minimal, meta: task.meta }, task_dir: root });
  assert.ok(withMeta.json.tools.some((t: any) => (t.function?.name ?? t.name) === 'focus_on_columns_with_mask'), 'given bands offer the band tools');
  const missing = await call('POST', '/v1/episodes', { task: { id: 'x', image: task.image, question: 'q?' }, task_dir: root });
  assert.equal(missing.status, 400);
  assert.match(missing.json.error.message, /answer/);
});

test("options.presentation: the server renders the block's system turn and view, says what it applies, and refuses a bad block naming the key", async () => {
  const presentation = { system_prompt: { tools: 'Tools on.', no_tools: 'Tools off.' }, view: { latest_images: 1, images_first: false } };
  const started = await call('POST', '/v1/episodes', { task, task_dir: root, options: { tools: false, max_turns: 2, presentation } });
  assert.equal(started.status, 200);
  assert.deepEqual(started.json.presentation, { ...presentation, prompts_only_grow: false, limits: { max_turns: 2, max_tool_calls: 8, max_images: 10 } });
  assert.deepEqual(started.json.observation.prompt[0], { role: 'system', content: [{ type: 'text', text: 'Tools off.' }] });
  assert.deepEqual(started.json.observation.messages, started.json.observation.prompt);
  const step = await call('POST', `/v1/episodes/${started.json.episode_id}/step`, { text: 'thinking' });
  assert.deepEqual(step.json.observation.prompt.map((m: any) => m.role), ['system', 'user', 'assistant', 'user']);
  assert.equal((await call('DELETE', `/v1/episodes/${started.json.episode_id}`)).status, 200);

  const health = await call('GET', '/v1/health');
  for (const [bad, message] of [
    [{ view: { latest_images: 0 } }, /options\.presentation\.view\.latest_images must be a whole number/],
    [{ system_prompt: 7 }, /options\.presentation\.system_prompt must be null/],
    [{ views: {} }, /options\.presentation has unknown key\(s\) views/],
  ] as const) {
    const refused = await call('POST', '/v1/episodes', { task, task_dir: root, options: { presentation: bad } });
    assert.equal(refused.status, 400, JSON.stringify(bad));
    assert.match(refused.json.error.message, message);
  }
  assert.equal((await call('GET', '/v1/health')).json.episodes, health.json.episodes, 'a refused block starts no episode');
});

test('POST /v1/presentation answers the texts a policy may read under a block: the fixed words, then its system turns', async () => {
  const answered = await call('POST', '/v1/presentation', { presentation: { system_prompt: { tools: 'Tools on.', no_tools: 'Tools off.' } } });
  assert.equal(answered.status, 200);
  assert.deepEqual(answered.json.texts.slice(-2), ['Tools on.', 'Tools off.']);
  assert.equal(answered.json.texts[0], 'OBSERVATION: The edited image follows.');
  assert.deepEqual(answered.json.presentation.view, { latest_images: null, images_first: false });
  assert.equal((await call('POST', '/v1/presentation', {})).json.texts.length, 4);
  const bad = await call('POST', '/v1/presentation', { presentation: { view: { latest_images: -1 } } });
  assert.equal(bad.status, 400);
  assert.match(bad.json.error.message, /presentation\.view\.latest_images/);
});

test("scoring sets the trajectory's findings and each call's target, as GET /v1/episodes/:id returns them", async () => {
  const gold = [{ name: 'focus_on_columns_with_mask', arguments: { columns: ['Rider', 'Wins'] } }, { name: 'focus_on_rows_with_draw', arguments: { rows: ['Merckx'] } }];
  const created = await call('POST', '/v1/episodes', { task: { ...task, gold }, task_dir: root });
  const id: string = created.json.episode_id;
  const draw = '<tool_call>{"name": "focus_on_rows_with_draw", "arguments": {"rows": ["Hinault"]}}</tool_call>';
  await call('POST', `/v1/episodes/${id}/step`, { text: draw });
  await call('POST', `/v1/episodes/${id}/step`, { text: draw });
  await call('POST', `/v1/episodes/${id}/step`, { text: '<answer>5</answer>' });
  const scored = await call('POST', `/v1/episodes/${id}/score`, {});
  // The second box is drawn over the first, pixel for pixel: it changed nothing (degenerate_edit).
  const expected = ['off_target_call', 'repeated_call', 'degenerate_edit'];
  assert.deepEqual(scored.json.findings, expected);
  const record = (await call('GET', `/v1/episodes/${id}`)).json;
  assert.deepEqual(record.findings, expected);
  assert.deepEqual(record.turns.flatMap((t: any) => (t.role === 'assistant' ? t.calls.map((c: any) => c.target) : [])), ['off', 'off']);
});

test('withhold_results: the step shows the task image the call read, with the normal run\'s text', async () => {
  const call1 = '<tool_call>{"name": "focus_on_columns_with_mask", "arguments": {"columns": ["Rider", "Wins"]}}</tool_call>';
  const observed = async (withhold: boolean) => {
    const started = await call('POST', '/v1/episodes', { task, task_dir: root, options: { withhold_results: withhold } });
    assert.equal(started.status, 200);
    const taskRef = started.json.observation.prompt.flatMap((m: any) => m.content).find((p: any) => p.type === 'image').ref;
    const step = await call('POST', `/v1/episodes/${started.json.episode_id}/step`, { text: call1 });
    assert.equal(step.status, 200);
    const [reply] = step.json.observation.messages;
    await call('DELETE', `/v1/episodes/${started.json.episode_id}`);
    return { taskRef, text: reply.content.filter((p: any) => p.type === 'text'), image: reply.content.find((p: any) => p.type === 'image') };
  };
  const normal = await observed(false);
  const withheld = await observed(true);
  assert.deepEqual(withheld.text, normal.text);
  assert.equal(withheld.image.ref, withheld.taskRef);
  assert.equal(contentHash(await readFile(withheld.image.path)), withheld.taskRef);
  assert.notEqual(normal.image.ref, normal.taskRef);
});
