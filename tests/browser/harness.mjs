// What every browser-driving script here shares: Debian's Chromium with the flags that give it
// software WebGL and keep it off the network (docs/STYLE.md), and web/serve.mjs on a free port.
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { after, before } from 'node:test';
import { fileURLToPath } from 'node:url';

import { chromium } from 'playwright-core';

export const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const siteDir = resolve(process.env.GPUMEM_SITE_DIR ?? join(repo, 'build', 'wasm', 'site'));
export const chromiumPath = process.env.GPUMEM_CHROMIUM ?? '/usr/bin/chromium';
// The native CLI the tests compare the page with, and where they save screenshots.
export const cliPath = resolve(process.env.GPUMEM_CLI ?? join(repo, 'build', 'native', 'core', 'cli', 'gpumem'));
export const outDir = join(repo, 'tests', 'browser', 'out');
export const CHROMIUM_ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu',
  '--use-angle=swiftshader', '--enable-unsafe-swiftshader',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
  '--no-first-run', '--disable-quic',
];

// Starts web/serve.mjs over `root` on a free loopback port; resolves with { child, url }.
// A calibration file from `gpumem calibrate` on five published records (every third: a mix of
// sources that moves the allocator's slack away from its default), written in `dir` as NAME.json.
export function makeCalibration(dir, name) {
  const records = execFileSync(process.execPath, [join(repo, 'tests', 'bench', 'records.mjs')],
    { encoding: 'utf8', env: { ...process.env, GPUMEM_CLI: cliPath } }).trim().split('\n')
    .filter((_, i) => (i + 1) % 3 === 0).slice(0, 5);
  const recordsFile = join(dir, `${name}.jsonl`);
  writeFileSync(recordsFile, records.join('\n') + '\n');
  const file = join(dir, `${name}.json`);
  const r = spawnSync(cliPath, ['calibrate', recordsFile, '--out', file, '--name', name], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return file;
}

export function startServer(root = siteDir) {
  return new Promise((resolveUrl, reject) => {
    const child = spawn(process.execPath,
      [join(repo, 'web', 'serve.mjs'), '--root', root, '--port', '0', '--host', '127.0.0.1'],
      { stdio: ['ignore', 'pipe', 'inherit'] });
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
      const match = output.match(/(http:\/\/\S+\/)/);
      if (match) resolveUrl({ child, url: match[1] });
    });
    child.on('exit', (code) => reject(new Error(`serve.mjs exited with ${code}: ${output}`)));
  });
}

// Collects what a page reports as wrong into `problems`: console errors, WebGL misuse (reported as
// warnings, e.g. a buffer overflow in the renderer), uncaught page errors and failed requests.
export function watchForProblems(page, problems) {
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console.error: ${message.text()} (${message.location().url})`);
    if (message.type() === 'warning' && /INVALID_|context lost/i.test(message.text()))
      problems.push(`WebGL: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('requestfailed', (request) => problems.push(`request failed: ${request.url()}`));
}

// Chromium with a fresh profile (removed by the caller: userDataDir); resolves with
// { context, page, userDataDir }. It accepts the https mock Hub's self-signed certificate.
// `device` overrides the context's device options: { deviceScaleFactor, hasTouch, isMobile } (a phone).
export async function launchBrowser(viewport, device = {}) {
  const userDataDir = await mkdtemp(join(tmpdir(), 'gpumem-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: chromiumPath, headless: true, args: CHROMIUM_ARGS, viewport, deviceScaleFactor: 1,
    ignoreHTTPSErrors: true, ...device,
  });
  const page = context.pages()[0] ?? await context.newPage();
  return { context, page, userDataDir };
}

// One test file's page and CLI: before() checks the site and the CLI are built, starts the server
// and one Chromium; after() closes them and runs `cleanup`. `suite.openPage(query, context)` opens
// the page (optionally in another browser's context), waits until it is ready and drawn, and
// collects what goes wrong in `suite.problems`.
export function pageSuite(viewport, cleanup = async () => {}) {
  const suite = { baseUrl: '', browser: null, server: null, problems: [] };
  before(async () => {
    assert.ok(existsSync(join(siteDir, 'index.html')), `no site at ${siteDir}`);
    assert.ok(existsSync(cliPath), `no CLI at ${cliPath} (GPUMEM_CLI)`);
    ({ child: suite.server, url: suite.baseUrl } = await startServer());
    suite.browser = await launchBrowser(viewport);
    await mkdir(outDir, { recursive: true });
  });
  after(async () => {
    await suite.browser?.context.close();
    if (suite.browser) await rm(suite.browser.userDataDir, { recursive: true, force: true });
    await cleanup();
    suite.server?.kill();
  });
  suite.openPage = async (query = '', context = suite.browser.context) => {
    const page = await context.newPage();
    await page.setViewportSize(viewport);
    watchForProblems(page, suite.problems);
    await page.goto(`${suite.baseUrl}${query}`);
    await page.evaluate(() => window.gpumemReady);
    await frames(page, 3);
    return page;
  };
  return suite;
}

// --- driving the page (window.gpumem's test hooks: uiState, uiLayout) ------------------------

// Resolves after `count` animation frames of `page`.
export function frames(page, count = 3) {
  return page.evaluate((n) => new Promise((done) => {
    const step = () => (n-- > 0 ? requestAnimationFrame(step) : done());
    step();
  }), count);
}

// Polls the page's state until `predicate(state)` holds; fails naming `what` after the timeout.
export async function until(page, what, predicate, timeoutMs = 10000) {
  const start = Date.now();
  for (;;) {
    const state = await page.evaluate(() => window.gpumem.uiState());
    if (predicate(state)) return state;
    if (Date.now() - start > timeoutMs) {
      const { markdown, ...shown } = state;
      throw new Error(`timed out waiting for ${what}: ${JSON.stringify(shown).slice(0, 2000)}`);
    }
    await page.waitForTimeout(50);
  }
}

// A named widget's rectangle in CSS pixels, as the page last drew it. A control under the closed
// "More" header (ui/app.cpp: everything after the model, the mode and the GPUs) is found as a user
// finds it: "More" is clicked open first.
export async function rect(page, name) {
  await frames(page, 2);
  let layout = await page.evaluate(() => window.gpumem.uiLayout());
  if (!layout[name] && layout.more_header && !(await page.evaluate(() => window.gpumem.uiState())).more_open) {
    const more = layout.more_header;
    await page.mouse.click(more.x + Math.min(more.w / 2, 40), more.y + more.h / 2);
    await frames(page, 3);
    layout = await page.evaluate(() => window.gpumem.uiLayout());
  }
  if (!layout[name]) throw new Error(`widget ${name} is not on the page: ${Object.keys(layout).join(', ')}`);
  return layout[name];
}

// A real mouse click on a named widget.
export async function click(page, name) {
  const r = await rect(page, name);
  await page.mouse.click(r.x + Math.min(r.w / 2, 40), r.y + r.h / 2);
  await frames(page, 3);
}

// Scrolls the results column with the mouse wheel until `name` is inside the viewport (`across`:
// where the wheel turns, as a fraction of the width; 0.25 scrolls the controls column).
export async function reveal(page, name, across = 0.75) {
  const viewport = page.viewportSize();
  for (let i = 0; i < 60; i++) {
    const r = await rect(page, name);
    if (r.y > 0 && r.y + r.h < viewport.height - 4) return r;
    await page.mouse.move(viewport.width * across, viewport.height / 2);
    await page.mouse.wheel(0, r.y + r.h >= viewport.height - 4 ? 120 : -120);
    await frames(page, 2);
  }
  throw new Error(`${name} never scrolled into view`);
}

// Dear ImGui 1.86 reads keys as states once a frame, so each key press gets its own frames;
// typed characters are queued and may come quickly.
export async function pressKey(page, key) {
  await page.keyboard.down(key);
  await frames(page, 1);
  await page.keyboard.up(key);
  await frames(page, 1);
}

// Types `value` into the slider at rect `r`: Ctrl+click turns it into a text field, Ctrl+A selects the
// old value, typing replaces it, Enter applies it. ImGui 1.86 samples keys and buttons once a frame, so
// each input event gets frames of its own: a Ctrl that lands in the same frame as the press is missed,
// and the click becomes a drag to the slider's middle value.
// A click in the middle of `r` with Control held, as a user Ctrl+clicks a slider to type into it; Control
// stays down (the caller releases it).
export async function ctrlClick(page, r) {
  await page.mouse.move(r.x + r.w / 2, r.y + r.h / 2);
  await page.keyboard.down('Control');
  await frames(page, 2);
  await page.mouse.down();
  await frames(page, 2);
  await page.mouse.up();
  await frames(page, 2);
}

export async function typeIntoSlider(page, r, value) {
  await ctrlClick(page, r);
  await page.keyboard.down('a');
  await frames(page, 2);
  await page.keyboard.up('a');
  await page.keyboard.up('Control');
  await frames(page, 2);
  await page.keyboard.type(String(value), { delay: 20 });
  await frames(page, 2);
  await pressKey(page, 'Enter');
  await frames(page, 2);
}

// Clicks a number field, deletes its `current` digits by keyboard, types `value` and presses Enter.
export async function replaceDigits(page, name, value, current) {
  await click(page, name);
  await pressKey(page, 'End');
  for (let i = 0; i < String(current).length; i++) await pressKey(page, 'Backspace');
  await page.keyboard.type(String(value), { delay: 5 });
  await pressKey(page, 'Enter');
}

// Loads a calibration file as a user does: opens the Calibration header, clicks "Load
// calibration..." and picks the file; resolves with the page state once it is applied.
export async function loadCalibration(page, file) {
  await reveal(page, 'calibration_header');
  await click(page, 'calibration_header');
  await reveal(page, 'load_calibration');
  const [chooser] = await Promise.all([page.waitForEvent('filechooser'), click(page, 'load_calibration')]);
  await chooser.setFiles(file);
  return until(page, 'the calibration loaded', (s) => s.decisions.calibration.hash !== '');
}
