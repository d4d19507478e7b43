// The served page in Debian's headless Chromium: it loads, draws, names only relative URLs (and
// links to the offline bundle), answers window.gpumem, survives malformed input, and reacts to a
// real mouse drag on the batch-size slider. tests/browser/bundle.test.mjs covers the bundle.
//
//   node --test tests/browser/
//
// Serves GPUMEM_SITE_DIR (default build/wasm/site, the `site` target's output) with
// web/serve.mjs and drives /usr/bin/chromium (GPUMEM_CHROMIUM to override) via playwright-core.
// Writes tests/browser/out/page.png and prints the load-to-first-frame time.

import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import {
  launchBrowser, outDir, rect, repo, siteDir, startServer, watchForProblems,
} from './harness.mjs';

import { decodePng } from './png.mjs';

const VIEWPORT = { width: 1280, height: 800 };
const PREFERRED_PRESET = 'meta-llama/Llama-3.1-8B';

let server;
let baseUrl;
let userDataDir;
let context;
let page;
const problems = [];   // console errors and uncaught page errors, checked at the end

// Resolves after the page has drawn `count` more frames (Dear ImGui reacts one frame later).
function frames(count = 3) {
  return page.evaluate((n) => new Promise((done) => {
    const step = () => (n-- > 0 ? requestAnimationFrame(step) : done());
    step();
  }), count);
}

before(async () => {
  assert.ok(existsSync(join(siteDir, 'index.html')),
    `no site at ${siteDir}: build it with cmake --build build/wasm --target site`);
  ({ child: server, url: baseUrl } = await startServer());
  ({ context, page, userDataDir } = await launchBrowser(VIEWPORT));
  watchForProblems(page, problems);
});

after(async () => {
  await context?.close();
  server?.kill();
  if (userDataDir) await rm(userDataDir, { recursive: true, force: true });
});

test('the page loads and draws its first frame', async () => {
  await page.goto(baseUrl);
  const { firstFrameMs } = await page.evaluate(() => window.gpumemReady);
  const navigationToReady = await page.evaluate(() => performance.now());
  console.log(`# load to first frame: ${firstFrameMs.toFixed(0)} ms (navigation start -> gpumemReady)`);
  assert.ok(firstFrameMs > 0 && firstFrameMs <= navigationToReady);

  const loadingHidden = await page.$eval('#loading', (el) => getComputedStyle(el).display === 'none');
  assert.ok(loadingHidden, 'the loading indicator is hidden after the first frame');

  // The canvas's backing store follows the window, in device pixels.
  const size = await page.$eval('#canvas', (c) => ({ w: c.width, h: c.height }));
  assert.deepEqual(size, { w: VIEWPORT.width, h: VIEWPORT.height });
});

test('every URL the page names is relative, and it links to the offline bundle', async () => {
  // GitHub Pages serves the site under /<repo>/: an absolute path or another origin would break.
  const urls = await page.$$eval('[src], [href]',
    (elements) => elements.map((el) => el.getAttribute('src') ?? el.getAttribute('href')));
  for (const url of urls)
    assert.ok(!/^(\/|[a-z][a-z0-9+.-]*:)/i.test(url) || url.startsWith('data:'), `not relative: ${url}`);

  const link = await page.$eval('#offline-link', (a) => ({
    href: a.getAttribute('href'), download: a.hasAttribute('download'), text: a.textContent,
    visible: a.getBoundingClientRect().width > 0,
  }));
  assert.deepEqual(link, { href: 'gpumem-offline.html', download: true, text: 'Download for offline use', visible: true });
  const response = await page.request.get(new URL(link.href, baseUrl).href);
  assert.equal(response.status(), 200, 'the bundle is served beside the page');
  assert.match(await response.text(), /<script id="gpumem-wasm" type="application\/octet-stream">/);
});

test('the canvas is drawn (a screenshot is not one colour)', async () => {
  await frames(5);
  const png = await page.screenshot();
  await mkdir(outDir, { recursive: true });
  await writeFile(join(outDir, 'page.png'), png);

  const image = decodePng(png);
  const colours = new Set();
  for (let y = 0; y < image.height; y += 4)
    for (let x = 0; x < image.width; x += 4)
      colours.add(image.rgb(x, y));
  assert.ok(colours.size > 20, `only ${colours.size} distinct colours in the screenshot`);
});

test('window.gpumem estimates a preset and returns errors as values', async () => {
  const answers = await page.evaluate(async (preferred) => {
    const catalogue = await window.gpumem.presets();
    const ids = catalogue.models.map((m) => m.id);
    const preset = ids.includes(preferred) ? preferred : ids[0];
    return {
      version: window.gpumem.version(),
      models: ids.length,
      gpus: catalogue.gpus.length,
      good: window.gpumem.estimate({ model: { preset }, mode: 'training' }),
      goodFromText: window.gpumem.estimate(JSON.stringify({ model: { preset } })),
      malformed: window.gpumem.estimate('{"model": {"preset": '),
      invalid: window.gpumem.estimate({ model: { preset }, training: { batch_size: -4 } }),
      afterwards: window.gpumem.estimate({ model: { preset } }),
    };
  }, PREFERRED_PRESET);

  assert.match(answers.version, /^\d+\.\d+\.\d+/);
  assert.ok(answers.models > 0 && answers.gpus > 0);
  assert.equal(answers.good.ok, true);
  assert.ok(answers.good.per_gpu.peak_allocated_bytes > 0);
  assert.ok(answers.good.per_gpu.peak_reserved_bytes >= answers.good.per_gpu.peak_allocated_bytes);
  assert.ok(answers.good.per_gpu.device_total_bytes >= answers.good.per_gpu.peak_reserved_bytes);
  assert.equal(answers.goodFromText.ok, true);

  assert.equal(answers.malformed.ok, false);
  assert.ok(answers.malformed.errors.length > 0 && answers.malformed.errors[0].message);
  assert.equal(answers.invalid.ok, false);
  assert.ok(answers.invalid.errors.some((e) => e.field === 'training.batch_size'));
  assert.equal(answers.afterwards.ok, true, 'the module still works after bad input (no trap)');
});

test('dragging the batch-size slider with the mouse changes the displayed total', async () => {
  await frames(3);
  const slider = await rect(page, 'batch_size');   // under "More", which rect() opens
  assert.ok(slider && slider.w > 20 && slider.h > 5, `batch_size slider in layout: ${JSON.stringify(slider)}`);
  const before = await page.evaluate(() => window.gpumem.uiTotal());
  assert.ok(before.bytes > 0, `a peak is displayed: ${JSON.stringify(before)}`);

  // A real drag: press near the slider's left end, move right over several frames, release.
  const y = slider.y + slider.h / 2;
  await page.mouse.move(slider.x + 4, y);
  await frames(2);
  await page.mouse.down();
  await frames(2);
  for (let i = 1; i <= 8; i++) {
    await page.mouse.move(slider.x + 4 + (slider.w * 0.6 * i) / 8, y);
    await frames(1);
  }
  await page.mouse.up();
  await frames(3);

  const after = await page.evaluate(() => window.gpumem.uiTotal());
  assert.notEqual(after.text, before.text, 'the displayed peak changed');
  assert.ok(after.bytes > before.bytes, `a bigger batch needs more memory: ${before.text} -> ${after.text}`);
  assert.ok(after.estimates > before.estimates, 'the core re-ran the estimate');

  await page.mouse.move(VIEWPORT.width - 10, VIEWPORT.height - 10);   // no tooltip in the shot
  await frames(3);
  await writeFile(join(outDir, 'page.png'), await page.screenshot());
});

test('the canvas follows a window resize', async () => {
  await page.setViewportSize({ width: 700, height: 900 });
  await frames(4);
  const size = await page.$eval('#canvas', (c) => ({ w: c.width, h: c.height }));
  assert.deepEqual(size, { w: 700, h: 900 });
  await writeFile(join(outDir, 'page-narrow.png'), await page.screenshot());
  await page.setViewportSize(VIEWPORT);
  await frames(2);
});

test('on a high-DPI screen the backing store follows devicePixelRatio', async () => {
  const before = (await page.evaluate(() => window.gpumem.uiLayout())).batch_size;
  const cdp = await context.newCDPSession(page);
  await cdp.send('Emulation.setDeviceMetricsOverride',
    { width: VIEWPORT.width, height: VIEWPORT.height, deviceScaleFactor: 2, mobile: false });
  await frames(6);
  const metrics = await page.evaluate(() => ({
    dpr: window.devicePixelRatio,
    w: document.getElementById('canvas').width,
    h: document.getElementById('canvas').height,
  }));
  assert.deepEqual(metrics, { dpr: 2, w: VIEWPORT.width * 2, h: VIEWPORT.height * 2 });
  // Widgets keep their CSS-pixel place: fonts and style scale with the ratio.
  const after = (await page.evaluate(() => window.gpumem.uiLayout())).batch_size;
  assert.ok(Math.abs(after.x - before.x) < 2 && Math.abs(after.w - before.w) < 2,
    `batch_size at 1x ${JSON.stringify(before)}, at 2x ${JSON.stringify(after)}`);
  await writeFile(join(outDir, 'page-hidpi.png'), await page.screenshot());
  await cdp.send('Emulation.clearDeviceMetricsOverride');
  await frames(2);
});

test('no console errors or page errors', () => {
  assert.deepEqual(problems, []);
});
