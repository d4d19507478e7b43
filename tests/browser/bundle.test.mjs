// The offline bundle (gpumem-offline.html) in Debian's headless Chromium, opened from file:// with
// the network off and every non-file request aborted: it starts, a preset is picked and a setting
// changed with real keyboard and mouse input in the Dear ImGui UI, and the figure it shows is the
// command-line tool's for the same scenario.
//
//   node --test tests/browser/
//
// Opens GPUMEM_SITE_DIR/gpumem-offline.html (default build/wasm/site, the `site` target's output)
// and runs GPUMEM_CLI (default build/native/core/cli/gpumem; the comparison is skipped, saying
// so, when it is missing). Writes tests/browser/out/bundle.png.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { pathToFileURL } from 'node:url';

import {
  cliPath as cli, launchBrowser, outDir, rect, siteDir, typeIntoSlider, watchForProblems,
} from './harness.mjs';

const bundle = join(siteDir, 'gpumem-offline.html');
const VIEWPORT = { width: 1280, height: 800 };
// The model picked in the UI: its lowercased id is the filter typed, and matches only it.
const TARGET_PRESET = 'Qwen/Qwen2.5-7B';
const TARGET_BATCH = 6;

let userDataDir;
let context;
let page;
const requests = [];    // every URL the page asked for
const blocked = [];     // the ones the route aborted
const problems = [];    // console errors, page errors, failed requests

const isLocal = (url) => url.startsWith('file:') || url.startsWith('data:');

function frames(count = 3) {
  return page.evaluate((n) => new Promise((done) => {
    const step = () => (n-- > 0 ? requestAnimationFrame(step) : done());
    step();
  }), count);
}

const center = (r) => ({ x: r.x + r.w / 2, y: r.y + r.h / 2 });

// Dear ImGui 1.86 reads key state once a frame: a key pressed and released between two frames
// is never seen, so each key stays down for a couple of frames (typed characters are queued).
async function tap(key) {
  await page.keyboard.down(key);
  await frames(2);
  await page.keyboard.up(key);
  await frames(2);
}

before(async () => {
  assert.ok(existsSync(bundle), `no bundle at ${bundle}: build it with cmake --build build/wasm --target site`);
  ({ context, page, userDataDir } = await launchBrowser(VIEWPORT));
  await context.setOffline(true);
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (isLocal(url)) return route.continue();
    blocked.push(url);
    return route.abort('internetdisconnected');
  });
  page.on('request', (request) => requests.push(request.url()));
  watchForProblems(page, problems);
});

after(async () => {
  await context?.close();
  if (userDataDir) await rm(userDataDir, { recursive: true, force: true });
});

test('the bundle starts from file:// with the network off', async () => {
  await page.goto(pathToFileURL(bundle).href);
  const { firstFrameMs } = await page.evaluate(() => window.gpumemReady);
  console.log(`# bundle, load to first frame: ${firstFrameMs.toFixed(0)} ms`);
  const state = await page.evaluate(() => ({
    offline: window.gpumemOffline,
    link: document.getElementById('offline-link') !== null,
    wasmBlockLeft: document.getElementById('gpumem-wasm') !== null,
    resources: performance.getEntriesByType('resource').map((e) => e.name),
  }));
  assert.equal(state.offline, true, 'page.js took the embedded .wasm');
  assert.equal(state.link, false, 'the bundle has no "Download for offline use" link');
  assert.equal(state.wasmBlockLeft, false, 'the base64 copy is dropped once decoded');
  assert.deepEqual(state.resources.filter((url) => !isLocal(url)), [], 'no resource from the network');
});

test('a preset picked and a setting changed in the UI give the CLI\'s figure', async (t) => {
  await frames(3);
  const presets = await page.evaluate(async () => (await window.gpumem.presets()).models.map((m) => m.id));
  assert.ok(presets.includes(TARGET_PRESET), `${TARGET_PRESET} is bundled`);
  const start = await page.evaluate(() => window.gpumem.uiScenario());
  assert.notEqual(start.model.preset, TARGET_PRESET, 'the page opens on another model');

  // The Model combo: click it open, type a filter (the popup focuses its filter box), leave the
  // box with Enter, move to the one match with the arrow key and take it with Space (Dear
  // ImGui's keyboard "activate").
  const layout = await page.evaluate(() => window.gpumem.uiLayout());
  assert.ok(layout.preset, `preset combo in layout: ${JSON.stringify(layout)}`);
  await page.mouse.click(center(layout.preset).x, center(layout.preset).y);
  await frames(3);
  await page.keyboard.type(TARGET_PRESET.toLowerCase(), { delay: 20 });
  await frames(2);
  for (const key of ['Enter', 'ArrowDown', 'Space']) await tap(key);
  const picked = await page.evaluate(() => window.gpumem.uiScenario());
  assert.equal(picked.model.preset, TARGET_PRESET, 'the combo took the typed model');

  // Batch size: Ctrl+click turns the slider into a text field; type the number, press Enter.
  const slider = await rect(page, 'batch_size');   // under "More", which rect() opens
  assert.ok(slider && slider.w > 20, `batch_size slider in layout: ${JSON.stringify(slider)}`);
  const before = await page.evaluate(() => window.gpumem.uiTotal());
  await typeIntoSlider(page, slider, TARGET_BATCH);

  const scenario = await page.evaluate(() => window.gpumem.uiScenario());
  const shown = await page.evaluate(() => window.gpumem.uiTotal());
  assert.equal(scenario.model.preset, TARGET_PRESET);
  assert.equal(scenario.training.batch_size, TARGET_BATCH, `batch size typed: ${JSON.stringify(scenario)}`);
  assert.ok(shown.bytes > before.bytes, `a bigger batch needs more: ${before.text} -> ${shown.text}`);

  await page.mouse.move(VIEWPORT.width - 10, VIEWPORT.height - 10);   // no tooltip in the shot
  await frames(3);
  await mkdir(outDir, { recursive: true });
  await writeFile(join(outDir, 'bundle.png'), await page.screenshot());

  const inPage = await page.evaluate((s) => window.gpumem.estimate(s), scenario);
  assert.equal(inPage.ok, true);
  assert.equal(inPage.per_gpu.device_total_bytes, shown.bytes, 'the headline is the device total');

  if (!existsSync(cli)) {
    t.skip(`no CLI at ${cli} (build it: cmake --build build/native --target gpumem, or set GPUMEM_CLI)`);
    return;
  }
  const dir = await mkdtemp(join(tmpdir(), 'gpumem-bundle-'));
  try {
    const file = join(dir, 'scenario.json');
    await writeFile(file, JSON.stringify(scenario));
    const native = JSON.parse(execFileSync(cli, ['estimate', '--scenario', file, '--json'], { encoding: 'utf8' }));
    console.log(`# ${TARGET_PRESET}, batch ${TARGET_BATCH}: page shows ${shown.text} ` +
      `(${shown.bytes} B), CLI ${native.per_gpu.device_total_bytes} B`);
    assert.equal(native.per_gpu.device_total_bytes, shown.bytes, 'device_total_bytes: CLI = page');
    assert.deepEqual(inPage.per_gpu, native.per_gpu, 'the whole per-GPU result: CLI = bundle');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('no request left file:// and nothing failed', () => {
  assert.deepEqual(requests.filter((url) => !isLocal(url)), [], 'requests besides file:// and data:');
  assert.deepEqual(blocked, []);
  assert.deepEqual(problems, []);
});
