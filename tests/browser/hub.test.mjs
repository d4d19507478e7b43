// The page against a local mock of the Hugging Face Hub (tests/browser/mock_hub.mjs; the Hub's
// address is a setting, hub= in a link): a model fetched by id gives the same estimate as the CLI,
// every way the Hub fails shows its own message and leaves the page usable, the token goes only
// to the Hub, and a share link and an exported scenario both round-trip. Real mouse and keyboard
// input throughout; screenshots at 1280x800 and 1920x1080 in tests/browser/out/.
//
//   node --test tests/browser/hub.test.mjs

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import {
  click, cliPath as cli,
  frames, launchBrowser, outDir, pressKey, rect, reveal, siteDir, startServer, typeIntoSlider, until,
  watchForProblems,
} from './harness.mjs';
import { GOOD_TOKEN, startMockHub } from './mock_hub.mjs';

const VIEWPORT = { width: 1280, height: 800 };

let server;
let baseUrl;
let hub;
let tlsHub;   // the same mock over https: the only kind of other Hub that may get a token
let browser;
const problems = [];

// Clicks a text field, empties it (End, then Backspace per character) and types `text`.
async function typeInto(page, name, text, current = null) {
  await click(page, name);
  const length = current ?? (await page.evaluate(() => window.gpumem.uiState())).hub.input.length;
  await pressKey(page, 'End');
  for (let i = 0; i < length; i++) await pressKey(page, 'Backspace');
  await page.keyboard.type(text, { delay: 5 });
  await frames(page, 2);
}

// Presses Enter in the Hub field and waits for the answer to that request (not an earlier one).
async function submitHub(page) {
  const before = (await page.evaluate(() => window.gpumem.uiState())).hub.serial;
  await pressKey(page, 'Enter');
  return until(page, 'the Hub answer', (s) => s.hub.serial > before && s.hub.status !== 'loading');
}

// Clicks Import, picks `file` in the real file chooser, and waits until the page has handed the
// file's text to the app ('read') or refused it by its size ('refused'). The page reads a file
// asynchronously (web/page.js, loadFile: file.text().then(...)), so this waits for that read, not
// for a guessed time: a listener on the document runs after the file input's own, and the promise
// of the read it saw settles after the page's handler on it has run.
async function importFile(page, file) {
  await page.evaluate(() => {
    const text = Blob.prototype.text;
    let read = null;
    Blob.prototype.text = function readText() {
      read = text.call(this);
      return read;
    };
    window.gpumemTestImported = new Promise((resolve) => {
      document.addEventListener('change', () => {
        Blob.prototype.text = text;
        if (read === null) resolve('refused');
        else read.then(() => resolve('read'), () => resolve('read'));
      }, { once: true });
    });
  });
  const chooser = page.waitForEvent('filechooser');
  await reveal(page, 'import');
  await click(page, 'import');
  await (await chooser).setFiles(file);
  const outcome = await page.evaluate(() => window.gpumemTestImported);
  // A file read before the config readers arrive waits for them (their module is fetched on first use):
  // the import is done once no file waits.
  if (outcome === 'read') await until(page, 'the file imported', (s) => !s.files_waiting_for_tools);
  await frames(page, 4);
  return outcome;
}

async function openPage(query = '', viewport = VIEWPORT, init = null) {
  const page = await browser.context.newPage();
  await page.setViewportSize(viewport);
  if (init) await page.addInitScript(init);
  watchForProblems(page, problems);
  await page.goto(`${baseUrl}${query}`);
  await page.evaluate(() => window.gpumemReady);
  await frames(page, 3);
  return page;
}

function cliTotal(scenarioText) {
  const out = execFileSync(cli, ['estimate', '--scenario', '-', '--json'], { input: scenarioText, encoding: 'utf8' });
  return JSON.parse(out).per_gpu.device_total_bytes;
}

before(async () => {
  assert.ok(existsSync(join(siteDir, 'index.html')), `no site at ${siteDir}`);
  ({ child: server, url: baseUrl } = await startServer());
  hub = await startMockHub();
  tlsHub = await startMockHub({ tls: true, redirectTo: hub.url });
  browser = await launchBrowser(VIEWPORT);
  await browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: baseUrl.replace(/\/$/, '') });
  await mkdir(outDir, { recursive: true });
});

after(async () => {
  await browser?.context.close();
  server?.kill();
  await hub?.close();
  await tlsHub?.close();
  if (browser?.userDataDir) await rm(browser.userDataDir, { recursive: true, force: true });
});

test('a link with model= and hub= fetches the config; the estimate equals the CLI for the same scenario', async (t) => {
  const page = await openPage(`?hub=${hub.url}&model=mirror/Qwen2.5-7B`);
  const state = await until(page, 'the model', (s) => s.hub.status !== 'loading');
  assert.equal(state.hub.status, 'ready', state.hub.message);
  assert.equal(state.source, 'hub');
  assert.equal(state.hub.id, 'mirror/Qwen2.5-7B');
  assert.ok(state.hub.api_total > 7e9, 'the Hub\'s safetensors count is shown beside ours');

  const scenario = await page.evaluate(() => window.gpumem.uiScenario());
  assert.equal(scenario.model.name, 'mirror/Qwen2.5-7B');
  assert.equal(scenario.model.hf_config.model_type, 'qwen2');
  const total = await page.evaluate(() => window.gpumem.uiTotal());
  if (!existsSync(cli)) return t.skip(`no CLI at ${cli} to compare with`);
  assert.equal(total.bytes, cliTotal(JSON.stringify(scenario)), 'page and CLI agree to the byte');

  const fetches = hub.requests.filter((r) => r.path.includes('Qwen2.5-7B'));
  assert.ok(fetches.some((r) => r.path === '/mirror/Qwen2.5-7B/resolve/main/config.json'));
  assert.ok(fetches.some((r) => r.path === '/api/models/mirror/Qwen2.5-7B'));
  for (const r of fetches) {
    assert.equal(r.referer, null, 'no referrer is sent to the Hub');
    assert.equal(r.cookie, null, 'no cookies are sent to the Hub');
    assert.equal(r.authorization, null, 'no token was given, none is sent');
  }
  await frames(page, 3);
  await page.mouse.move(5, VIEWPORT.height - 5);
  await writeFile(join(outDir, 'hub-1280x800.png'), await page.screenshot());
  await page.close();
});

test('typing an id or a Hub URL and pressing Enter fetches it; ids are checked before any request', async () => {
  const page = await openPage(`?hub=${hub.url}`);
  await click(page, 'source_hub');
  await typeInto(page, 'hub_input', `https://huggingface.co/mirror/gemma-2-9b/tree/main`);
  let state = await submitHub(page);
  assert.equal(state.hub.status, 'ready', state.hub.message);
  assert.equal(state.hub.id, 'mirror/gemma-2-9b');

  const before = hub.requests.length;
  for (const bad of ['../../etc/passwd', 'org/name/../../x', 'evil.com@x/y', 'a/b?c=1', '--x/y']) {
    await typeInto(page, 'hub_input', bad);
    state = await submitHub(page);
    assert.equal(state.hub.kind, 'input', `${bad}: ${state.hub.message}`);
  }
  assert.equal(hub.requests.length, before, 'an invalid id makes no request at all');
  await page.close();
});

const FAULTS = [
  ['missing/model', 'not_found', /not found on the Hub/, false],
  ['gated/model', 'unauthorized', /gated or private.*access token/, false],
  ['html/model', 'malformed', /not JSON/, false],
  ['cut/model', 'truncated', /cut off/, true],
  ['busy/model', 'rate_limited', /HTTP 429.*30 s/, true],
  ['down/model', 'server', /HTTP 503/, true],
  ['bad/model', 'unsupported', /config\.json cannot be read: hidden_size: is required/, false],
  ['slow/model', 'timeout', /did not answer within/, true],
];

test('each Hub failure shows its own message, offers a retry when it may help, and the page stays usable', async () => {
  const page = await openPage(`?hub=${hub.url}`, VIEWPORT, () => { window.gpumemHubTimeoutMs = 1500; });
  await click(page, 'source_hub');
  for (const [id, kind, message, retryable] of FAULTS) {
    await typeInto(page, 'hub_input', id);
    const state = await submitHub(page);
    assert.equal(state.hub.kind, kind, `${id}: ${state.hub.message}`);
    assert.match(state.hub.message, message, id);
    assert.equal(state.hub.retryable, retryable, `${id} retryable`);
    if (retryable) await rect(page, 'hub_retry');
  }
  // A failure for an id that a bundled preset answers to offers that preset.
  await typeInto(page, 'hub_input', 'meta-llama/Llama-3.1-8B-Instruct');
  const twin = await submitHub(page);
  assert.equal(twin.hub.bundled_twin, 'meta-llama/Llama-3.1-8B');
  // Still usable: back to a preset, and the estimate follows.
  await click(page, 'source_preset');
  const total = await page.evaluate(() => window.gpumem.uiTotal());
  assert.ok(total.bytes > 0, 'a preset is estimated after the failures');
  await page.close();
});

// Remembers `token` through the page's own controls (Hub source, settings, token, Remember).
async function rememberToken(page, token) {
  await click(page, 'source_hub');
  await click(page, 'hub_settings');
  await typeInto(page, 'hub_token', token, 0);
  await click(page, 'remember_token');
}

test('a gated model loads with a token confirmed for its Hub; the token never goes into the link', async () => {
  const page = await openPage(`?hub=${tlsHub.url}`);
  await click(page, 'source_hub');
  await typeInto(page, 'hub_input', 'gated/llama');
  let state = await submitHub(page);
  assert.equal(state.hub.kind, 'unauthorized');
  assert.equal(state.hub.token_withheld, false, 'no token yet, nothing withheld');

  await click(page, 'hub_settings');
  await typeInto(page, 'hub_token', 'hf_wrong', 0);
  await click(page, 'hub_input');
  state = await submitHub(page);
  assert.equal(state.hub.kind, 'unauthorized', 'a Hub from a link does not get the token unasked');
  assert.equal(state.hub.token_withheld, true);
  await click(page, 'trust_hub');   // "Send my token to https://127.0.0.1:PORT"
  state = await until(page, 'the confirmed fetch', (s) => s.hub.status !== 'loading' && !s.hub.token_withheld);
  assert.equal(state.hub.kind, 'forbidden', 'the wrong token reached the Hub once confirmed');

  await typeInto(page, 'hub_token', GOOD_TOKEN, 'hf_wrong'.length);
  await click(page, 'hub_input');
  state = await submitHub(page);
  assert.equal(state.hub.status, 'ready', state.hub.message);
  assert.equal(state.hub.id, 'gated/llama');

  const withToken = tlsHub.requests.filter((r) => r.authorization === `Bearer ${GOOD_TOKEN}`);
  assert.ok(withToken.length >= 1, 'the token is sent to the confirmed Hub');
  const href = await page.evaluate(() => window.location.href);
  assert.ok(!href.includes(GOOD_TOKEN) && !href.includes('hf_'), `the link holds no token: ${href}`);
  assert.ok(!JSON.stringify(state.share).includes(GOOD_TOKEN), 'the share state holds no token');
  const scenario = JSON.stringify(await page.evaluate(() => window.gpumem.uiScenario()));
  assert.ok(!scenario.includes(GOOD_TOKEN), 'the scenario holds no token');
  const stored = await page.evaluate(() => JSON.stringify({ ...window.localStorage }));
  assert.ok(!stored.includes(GOOD_TOKEN), 'not remembered unless asked');
  await click(page, 'remember_token');
  assert.equal(await page.evaluate(() => window.localStorage.getItem('gpumem:/:hub_token')), GOOD_TOKEN,
    'remembered in this browser when asked, under this site\'s key');
  await click(page, 'remember_token');
  assert.equal(await page.evaluate(() => window.localStorage.getItem('gpumem:/:hub_token')), null, 'and forgotten');
  await page.close();
});

test('a link naming another Hub never gets a remembered token; confirming holds for one origin, one visit', async () => {
  // The user's own visit: the token remembered. Requests to the real Hub are answered here.
  const toRealHub = [];
  await browser.context.route('https://huggingface.co/**', (route) => {
    toRealHub.push({ url: route.request().url(), authorization: route.request().headers().authorization ?? null });
    return route.fulfill({ status: 404, headers: { 'Access-Control-Allow-Origin': '*', 'X-Error-Code': 'RepoNotFound' },
      contentType: 'application/json', body: '{"error": "Repository not found"}' });
  });
  const own = await openPage('');
  await rememberToken(own, GOOD_TOKEN);
  await own.close();

  // An attacker's link, over https and over plain http: neither origin gets the token.
  const marks = [hub.requests.length, tlsHub.requests.length];
  const attack = await openPage(`?model=gated/victim-private&hub=${tlsHub.url}`);
  let state = await until(attack, 'the link\'s model', (s) => s.hub.status !== 'loading');
  assert.equal(state.hub.kind, 'unauthorized', state.hub.message);
  assert.equal(state.hub.token_withheld, true, 'the page knows it withheld the token');
  assert.match(state.hub.message, /your access token was not sent to https:\/\/127\.0\.0\.1:\d+: send it there only if/);
  assert.equal(state.hub.base_from_link, true);
  const sent = tlsHub.requests.slice(marks[1]);
  assert.ok(sent.length >= 1 && sent.every((r) => r.authorization === null), 'no Authorization header at the link\'s Hub');
  const banner = await rect(attack, 'hub_banner');
  assert.ok(banner.y >= 0 && banner.y < VIEWPORT.height / 4, 'the banner is at the top of the page');
  await rect(attack, 'trust_hub');
  await attack.mouse.move(5, VIEWPORT.height - 5);
  await frames(attack, 3);
  await writeFile(join(outDir, 'hub-link-banner-1280x800.png'), await attack.screenshot());
  const saved = await attack.evaluate(() => window.localStorage.getItem('gpumem:/:state'));
  assert.ok(!saved.includes('hub='), `the link's Hub is not saved: ${saved}`);

  const plain = await openPage(`?model=gated/victim-private&hub=${hub.url}`);
  state = await until(plain, 'the plain-http link', (s) => s.hub.status !== 'loading');
  assert.equal(state.hub.token_withheld, true);
  const layout = await plain.evaluate(() => window.gpumem.uiLayout());
  assert.ok(layout.hub_banner && !layout.trust_hub, 'plain http: a banner, and no button to send the token');
  assert.ok(hub.requests.slice(marks[0]).every((r) => r.authorization === null), 'no token over plain http');
  await plain.close();

  // The user confirms in the page: the token goes to that origin, and nowhere else.
  await click(attack, 'trust_hub');
  state = await until(attack, 'the confirmed fetch', (s) => s.hub.status !== 'loading' && !s.hub.token_withheld);
  assert.equal(state.hub.status, 'ready', state.hub.message);
  assert.ok(tlsHub.requests.slice(marks[1]).some((r) => r.authorization === `Bearer ${GOOD_TOKEN}`), 'sent once confirmed');
  // A redirect from the confirmed Hub to another origin does not carry the token along.
  const beforeHop = hub.requests.length;
  await typeInto(attack, 'hub_input', 'hop/Qwen2.5-7B');
  state = await submitHub(attack);
  assert.equal(state.hub.status, 'ready', state.hub.message);
  const hopped = hub.requests.slice(beforeHop).filter((r) => r.path.includes('Qwen2.5-7B/resolve'));
  assert.ok(hopped.length >= 1, 'the redirect was followed');
  assert.ok(hopped.every((r) => r.authorization === null), 'the token did not follow the redirect');
  assert.ok(hub.requests.every((r) => r.authorization === null), 'the http Hub never saw a token');
  await attack.close();

  // The same link again is a new visit: asked again, nothing sent before the answer.
  const mark = tlsHub.requests.length;
  const again = await openPage(`?model=gated/victim-private&hub=${tlsHub.url}`);
  state = await until(again, 'the link again', (s) => s.hub.status !== 'loading');
  assert.equal(state.hub.token_withheld, true);
  assert.ok(tlsHub.requests.slice(mark).every((r) => r.authorization === null), 'each visit asks again');
  await again.close();

  // A plain visit goes back to the Hub the user chose: huggingface.co, with the token.
  const marksAfter = [hub.requests.length, tlsHub.requests.length];
  const realMark = toRealHub.length;
  const revisit = await openPage('');
  state = await until(revisit, 'the revisit', (s) => s.hub.status !== 'loading');
  assert.equal(state.hub.base, 'https://huggingface.co');
  assert.equal(state.hub.base_from_link, false);
  assert.deepEqual([hub.requests.length, tlsHub.requests.length], marksAfter, 'no request to the link\'s Hub');
  const real = toRealHub.slice(realMark);
  assert.ok(real.length >= 1 && real.every((r) => r.authorization === `Bearer ${GOOD_TOKEN}`),
    `the remembered token goes to huggingface.co: ${JSON.stringify(real)}`);
  await click(revisit, 'source_hub');
  await click(revisit, 'hub_settings');
  await click(revisit, 'remember_token');   // forget it: the other tests run without a token
  assert.equal(await revisit.evaluate(() => window.localStorage.getItem('gpumem:/:hub_token')), null);
  await revisit.close();
  await browser.context.unroute('https://huggingface.co/**');
});

test('a link whose settings cannot be read opens with a message saying why', async () => {
  const b64 = (text) => Buffer.from(text).toString('base64url');
  const cases = [
    ['@@@', /not base64url-encoded UTF-8/],
    [b64('{"training": '), /not valid JSON/],
    [b64('[1, 2]'), /not a JSON object/],
    [b64('{"training": {"batch_size": -4}}'), /training\.batch_size/],
    [b64('{"a":'.repeat(100) + '1' + '}'.repeat(100)), /nested deeper than 64/],
    ['A'.repeat(1100 * 1024), /too large \(1\.1 MiB; limit 1\.0 MiB\)/],
  ];
  // Servers refuse URLs this long (node: 431) before the page could; Chromium takes up to 2 MB, as a
  // file:// page would, so the page is answered from here for the long one.
  const index = await readFile(join(siteDir, 'index.html'));
  const longLink = (url) => url.search.length > 65536;
  await browser.context.route(longLink,
    (route) => route.fulfill({ status: 200, contentType: 'text/html', body: index }));
  for (const [s, message] of cases) {
    const page = await openPage(`?model=Qwen/Qwen2.5-7B&s=${s}`);
    const state = await page.evaluate(() => window.gpumem.uiState());
    assert.match(state.link_message, /^this link's settings \(s=\) were ignored: /, s.slice(0, 40));
    assert.match(state.link_message, message, s.slice(0, 40));
    assert.equal(state.source, 'preset', 'the link\'s model still opens');
    await rect(page, 'link_message');
    await page.close();
  }
  await browser.context.unroute(longLink);
});

test('dropped text and files over 4 MiB are refused by size, before they reach the WebAssembly heap', async () => {
  const page = await openPage('?model=Qwen/Qwen2.5-7B');
  const drop = (size) => page.evaluate((n) => {
    const data = new DataTransfer();
    data.setData('text/plain', n > 0 ? '{'.repeat(n) : JSON.stringify({ version: 1, mode: 'inference' }));
    const start = performance.now();
    document.dispatchEvent(new DragEvent('drop', { dataTransfer: data, bubbles: true, cancelable: true }));
    return { ms: performance.now() - start, heap: window.gpumem.wasmMemoryBytes() };
  }, size);
  const heapBefore = await page.evaluate(() => window.gpumem.wasmMemoryBytes());
  const big = await drop(100 * 1024 * 1024);
  await frames(page, 3);
  let state = await page.evaluate(() => window.gpumem.uiState());
  assert.equal(state.import_message, 'dropped text: too large (100.0 MiB; limit 4.0 MiB)');
  assert.equal(big.heap, heapBefore, 'the WebAssembly memory did not grow');
  console.log(`# 100 MiB of dropped text refused in ${big.ms.toFixed(0)} ms; wasm memory ${heapBefore} bytes before and after`);
  await drop(0);   // a small scenario still loads (once the config readers are here: ui/tools.h)
  state = await until(page, 'the scenario read', (s) => !s.files_waiting_for_tools);
  assert.equal(state.import_message, '');
  assert.equal((await page.evaluate(() => window.gpumem.uiScenario())).mode, 'inference');

  const file = join(outDir, 'too-large.json');
  await writeFile(file, ' '.repeat(5 * 1024 * 1024));
  await reveal(page, 'share_header');
  await click(page, 'share_header');
  assert.equal(await importFile(page, file), 'refused', 'refused by its size, never read');
  state = await page.evaluate(() => window.gpumem.uiState());
  assert.equal(state.import_message, 'too-large.json: too large (5.0 MiB; limit 4.0 MiB)');
  await page.close();
});

test('a share link restores the scenario exactly, and settings persist between visits', async () => {
  const page = await openPage(`?model=Qwen/Qwen2.5-7B`);
  // Batch size by keyboard: Ctrl+click turns the slider into a text field.
  await typeIntoSlider(page, await rect(page, 'batch_size'), 3);
  await frames(page, 2);
  const scenario = await page.evaluate(() => window.gpumem.uiScenario());
  assert.equal(scenario.training.batch_size, 3);
  assert.equal(scenario.model.preset, 'Qwen/Qwen2.5-7B');
  const link = await page.evaluate(() => window.location.href);
  assert.match(link, /[?&]model=Qwen\/Qwen2\.5-7B/);
  await page.close();

  const shared = await browser.context.newPage();
  watchForProblems(shared, problems);
  await shared.goto(link);
  await shared.evaluate(() => window.gpumemReady);
  await frames(shared, 3);
  assert.deepEqual(await shared.evaluate(() => window.gpumem.uiScenario()), scenario, 'the link restores it');
  await shared.close();

  const revisit = await openPage('');   // no query: the saved settings come back
  assert.deepEqual(await revisit.evaluate(() => window.gpumem.uiScenario()), scenario, 'settings persist');
  await revisit.close();
});

test('export, then import the file: the scenario round-trips; a gpu-mem-calculator config file imports too', async () => {
  const page = await openPage(`?model=Qwen/Qwen2.5-7B`);
  await click(page, 'mode_inference');
  const exported = await page.evaluate(() => window.gpumem.uiScenario());
  await reveal(page, 'share_header');
  await click(page, 'share_header');
  const download = page.waitForEvent('download');
  await reveal(page, 'export');
  await click(page, 'export');
  const file = join(outDir, 'exported-scenario.json');
  await (await download).saveAs(file);
  const text = await readFile(file, 'utf8');
  assert.deepEqual(JSON.parse(text), exported, 'the exported file is the scenario');

  await page.mouse.move(10, 10);
  await click(page, 'mode_training');   // change something, then import the file back
  assert.notDeepEqual(await page.evaluate(() => window.gpumem.uiScenario()), exported);
  assert.equal(await importFile(page, file), 'read');
  assert.deepEqual(await page.evaluate(() => window.gpumem.uiScenario()), exported, 'import restores it');

  const seed = join(outDir, 'gpu-mem-calculator-scenario.json');
  await writeFile(seed, JSON.stringify({ model: { num_parameters: '7B', num_layers: 32, hidden_size: 4096,
    num_attention_heads: 32 }, training: { batch_size: 2, seq_len: 1024, activation_checkpointing: 1 } }));
  assert.equal(await importFile(page, seed), 'read');
  const state = await page.evaluate(() => window.gpumem.uiState());
  assert.equal(state.import_message, '');
  assert.equal(state.source, 'manual');
  const imported = await page.evaluate(() => window.gpumem.uiScenario());
  assert.equal(imported.training.batch_size, 2);
  assert.equal(imported.training.activation_checkpointing, 'selective');  // gpu-mem-calculator's level 1

  // Copy as Markdown puts the breakdown on the clipboard.
  await reveal(page, 'copy_markdown');
  await click(page, 'copy_markdown');
  const clip = await page.evaluate(() => navigator.clipboard.readText());
  assert.match(clip, /\| \*\*Device total\*\* \| \d+\.\d\d \|/);
  await page.close();
});

test('pinning a result compares it with the current one: the pinned column keeps its figures; screenshot at 1920x1080', async () => {
  const page = await openPage(`?model=meta-llama/Llama-3.1-8B`, { width: 1920, height: 1080 });
  const trainingText = JSON.stringify(await page.evaluate(() => window.gpumem.uiScenario()));
  await click(page, 'compare_header');
  await click(page, 'pin');
  await click(page, 'mode_inference');
  const inferenceText = JSON.stringify(await page.evaluate(() => window.gpumem.uiScenario()));
  const state = await page.evaluate(() => window.gpumem.uiState());
  assert.equal(state.pinned, 1);
  // Two columns: the pinned training step as the CLI estimates it, then the current serving run.
  assert.equal(state.compare.length, 2);
  const [pinned, current] = state.compare;
  assert.equal(pinned.device_total_bytes, cliTotal(trainingText), 'the pinned column: the training estimate');
  assert.equal(current.label, 'current');
  assert.equal(current.device_total_bytes, cliTotal(inferenceText), 'the current column: the serving estimate');
  assert.notEqual(pinned.device_total_bytes, current.device_total_bytes, 'the comparison has something to show');
  assert.match(pinned.label, /Llama-3\.1-8B/);
  await page.mouse.move(5, 1075);
  await frames(page, 3);
  await writeFile(join(outDir, 'compare-1920x1080.png'), await page.screenshot());
  await page.close();
});

test('the page sets a Content-Security-Policy and loads nothing from third parties', async () => {
  const page = await openPage('');
  const csp = await page.$eval('meta[http-equiv="Content-Security-Policy"]', (m) => m.content);
  assert.match(csp, /default-src 'self'/);
  assert.match(csp, /connect-src 'self' https:\/\/huggingface\.co/);
  const foreign = [];
  page.on('request', (r) => { if (!r.url().startsWith(baseUrl)) foreign.push(r.url()); });
  await page.reload();
  await page.evaluate(() => window.gpumemReady);
  assert.deepEqual(foreign, [], 'only the site itself is requested when no Hub model is asked for');
  await page.close();
});

test('no console errors or page errors', () => {
  // A failed Hub request is reported by Chromium as a console error for some statuses; those are
  // the faults this file provokes on purpose, so only other problems count.
  const unexpected = problems.filter((p) => !p.includes(hub.url) && !/status of (401|403|404|429|503)/.test(p));
  assert.deepEqual(unexpected, []);
});
