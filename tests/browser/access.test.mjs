// The page for people who do not use a mouse or cannot see the canvas: the result in words in an
// aria-live region (index.html #summary, kept current by the app), and every control reachable
// from the keyboard alone (arrow keys move between controls, Space uses one). Headless Chromium,
// real key presses; the figures are checked against the CLI.
//
//   node --test tests/browser/access.test.mjs
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { rm, writeFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import { cliPath, frames, launchBrowser, outDir, pressKey, siteDir, startServer, watchForProblems } from './harness.mjs';

let server;
let baseUrl;
let browser;
const problems = [];

before(async () => {
  assert.ok(existsSync(join(siteDir, 'index.html')), `no site at ${siteDir}`);
  ({ child: server, url: baseUrl } = await startServer());
  browser = await launchBrowser({ width: 1280, height: 800 });
  await mkdir(outDir, { recursive: true });
});

after(async () => {
  await browser?.context.close();
  server?.kill();
  if (browser?.userDataDir) await rm(browser.userDataDir, { recursive: true, force: true });
});

async function openPage(query) {
  const page = await browser.context.newPage();
  watchForProblems(page, problems);
  await page.goto(`${baseUrl}${query}`);
  await page.evaluate(() => window.gpumemReady);
  await frames(page, 3);
  return page;
}

const summaryOf = (page) => page.$eval('#summary', (e) => ({
  text: e.textContent, live: e.getAttribute('aria-live'), role: e.getAttribute('role'),
}));

test('the result is in an aria-live region, in words, with the figures the page shows', async () => {
  // Full fine-tuning (the page opens on LoRA), which does not fit one H100.
  const full = Buffer.from(JSON.stringify({ version: 1, training: { method: 'full' } })).toString('base64url');
  const page = await openPage(`?model=Qwen/Qwen2.5-7B&s=${full}`);
  const summary = await summaryOf(page);
  assert.equal(summary.live, 'polite');
  assert.equal(summary.role, 'status');
  const total = await page.evaluate(() => window.gpumem.uiTotal());
  const gib = (total.bytes / 2 ** 30).toFixed(1);
  assert.match(summary.text, new RegExp(`^Qwen/Qwen2\\.5-7B, .*: ${gib.replace('.', '\\.')} GiB per GPU at the peak`));
  assert.match(summary.text, /does not fit: \d+ % of 79\.65 GiB \(NVIDIA H100 80GB HBM3\)\. /);
  assert.match(summary.text, /Largest: Optimizer states [\d.]+ GiB, Weights [\d.]+ GiB, Gradients [\d.]+ GiB\./);
  if (existsSync(cliPath)) {
    const scenario = await page.evaluate(() => window.gpumem.uiScenario());
    const cli = JSON.parse(execFileSync(cliPath, ['estimate', '--scenario', '-', '--json'], { input: JSON.stringify(scenario), encoding: 'utf8' }));
    assert.equal(total.bytes, cli.per_gpu.device_total_bytes, 'the figure read out is the CLI\'s');
  }
  await page.close();
});

test('keyboard alone: the arrow keys pick a column and its controls, Space uses one, the summary follows', async () => {
  const page = await openPage('?model=Qwen/Qwen2.5-7B');
  const before = await summaryOf(page);
  const focus = async (key) => {
    await pressKey(page, key);
    await frames(page, 3);
    return (await page.evaluate(() => window.gpumem.uiState())).keyboard_focus;
  };
  // No mouse anywhere: the page has keyboard focus from the start.
  assert.equal(await focus('ArrowDown'), 'controls_column');
  assert.equal(await focus('ArrowRight'), 'results_column');
  assert.equal(await focus('ArrowLeft'), 'controls_column');
  await focus('Space');   // into the controls
  let at = '';
  for (let i = 0; i < 12 && at !== 'mode_training'; i++) at = await focus('ArrowDown');
  assert.equal(at, 'mode_training', 'the arrow keys reach the mode buttons');
  assert.equal(await focus('ArrowRight'), 'mode_inference');
  await focus('Space');
  const scenario = await page.evaluate(() => window.gpumem.uiScenario());
  assert.equal(scenario.mode, 'inference', 'Space used the button');
  const after = await summaryOf(page);
  assert.notEqual(after.text, before.text, 'the summary follows the result');
  assert.match(after.text, /fits: \d+ % of [\d.]+ GiB/);
  assert.equal(await focus('Escape'), 'controls_column', 'Escape leaves the column');
  await writeFile(join(outDir, 'keyboard-1280x800.png'), await page.screenshot());
  await page.close();
});

test('no console errors or page errors', () => {
  assert.deepEqual(problems, []);
});
