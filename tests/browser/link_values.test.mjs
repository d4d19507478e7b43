// What a link may not do silently (issue #31), in the page, with real mouse input:
//   - a link that sets a card size, overhead factors or a calibration: the headline names the
//     memory the verdict was judged against, the verdict and the bar agree, and the values are
//     shown as set by the link beside the headline; "Back to defaults" clears exactly those;
//   - text from a link (cal_name, hub=, model=) or a Hub config (model_type) is shown on one line,
//     its controls escaped: it cannot forge a line of its own in the page's banners;
//   - Remove deletes a calibration from the browser too: a later link naming it says it is not applied.
// Each figure is checked against the native CLI on the page's own scenario. Screenshots:
// tests/browser/out/link-values-*.png.
//
//   GPUMEM_CLI=build/native/core/cli/gpumem node --test tests/browser/link_values.test.mjs

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import {
  click, cliPath as cli, frames, loadCalibration, makeCalibration, outDir, pageSuite, rect, repo, reveal, until,
} from './harness.mjs';
import { startMockHub } from './mock_hub.mjs';

const VIEWPORT = { width: 1280, height: 800 };
const work = mkdtempSync(join(tmpdir(), 'gpumem-link-values-'));
let hub;

const { problems, openPage } = pageSuite(VIEWPORT, () => rm(work, { recursive: true, force: true }));

// A Hub repository whose config.json is Llama-3.1-8B's with a model_type that tries to start a
// line of its own (and colour it, on a terminal).
const FORGED = 'evil\nNOTICE: verified to fit\u001b[32m';
before(async () => {
  const llama = JSON.parse(readFileSync(join(repo, 'presets', 'models', 'meta-llama__Llama-3.1-8B.json'), 'utf8'));
  hub = await startMockHub({
    records: [{ model_id: 'forge/evil-8b', config: { ...llama.config, model_type: FORGED }, total_params: 8030261248 }],
  });
});
after(async () => hub?.close());

const b64 = (value) => Buffer.from(JSON.stringify(value)).toString('base64url');
const uiState = (page) => page.evaluate(() => window.gpumem.uiState());
const uiScenario = (page) => page.evaluate(() => window.gpumem.uiScenario());
const uiTotal = (page) => page.evaluate(() => window.gpumem.uiTotal());
const summary = (page) => page.$eval('#summary', (e) => e.textContent);

function runCli(args, input) {
  const r = spawnSync(cli, args, { input, encoding: 'utf8' });
  assert.equal(r.status, 0, `gpumem ${args.join(' ')}: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

// The CLI's estimate of exactly what the page sent to its core.
async function cliOf(page) {
  return runCli(['estimate', '--scenario', '-', '--json'], JSON.stringify(await uiScenario(page)));
}

// "20 %", as the headline and the bar round a utilization.
const percent = (utilization) => `${Math.round(utilization * 100)} %`;

// Every text the page showed in its notices, the headline and the summary: none may hold a control
// character, and no line may start with the forged notice.
function assertOneLine(texts) {
  for (const text of texts) {
    assert.ok(!/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/.test(text), `a control character is shown: ${JSON.stringify(text)}`);
    assert.ok(!/(^|\n)NOTICE/.test(text), `a forged line: ${JSON.stringify(text)}`);
  }
}

test('a link\'s card size and overheads: the verdict names its capacity, the bar agrees, Back to defaults clears them', async () => {
  // The issue's link: Llama-3.1-8B full fine-tuning on an H100 (157 GiB, does not fit), told the card has 800 GiB.
  const link = { version: 1, training: { batch_size: 1 }, hardware: { gpu: 'H100-80GB', gpu_memory_gb: 800 },
    overheads: { cuda_context_gib: 0 } };
  const page = await openPage(`?model=meta-llama/Llama-3.1-8B&s=${b64(link)}`);
  let state = await until(page, 'the headline', (s) => s.texts?.verdict);
  const linked = await cliOf(page);
  assert.equal(linked.per_gpu.capacity_bytes, 800 * 2 ** 30);
  assert.equal((await uiTotal(page)).bytes, linked.per_gpu.device_total_bytes, 'the figure is the CLI\'s');
  assert.equal(linked.fits, true);
  assert.equal(percent(linked.utilization), '20 %');

  // The headline names the capacity the verdict was judged against, and the card's own.
  assert.equal(state.texts.headline_card, 'of 800.00 GiB: a custom size (the NVIDIA H100 80GB HBM3 has 79.65 GiB)');
  assert.equal(state.texts.verdict, 'Fits: 20 % of 800.00 GiB.');
  assert.equal(state.texts.bar_gpu_0, '20 %', 'the bar agrees with the verdict');
  assert.equal(state.texts.link_values,
    'Set by the link: GPU memory 800 GiB (the NVIDIA H100 80GB HBM3 has 79.65 GiB); overhead cuda_context_gib = 0.');
  assert.deepEqual(state.link_values,
    ['GPU memory 800 GiB (the NVIDIA H100 80GB HBM3 has 79.65 GiB)', 'overhead cuda_context_gib = 0']);
  const spoken = await summary(page);
  assert.match(spoken, /fits: 20 % of 800\.00 GiB: a custom size \(the NVIDIA H100 80GB HBM3 has 79\.65 GiB\)\./);
  assert.match(spoken, /Set by the link: GPU memory 800 GiB .*; overhead cuda_context_gib = 0\./);
  await rect(page, 'link_defaults');
  await page.mouse.move(5, VIEWPORT.height - 5);
  await frames(page, 3);
  await page.screenshot({ path: join(outDir, 'link-values-set-1280x800.png') });

  // One click: the card is an H100 again and the overhead its default; the link's batch size stays.
  await click(page, 'link_defaults');
  state = await until(page, 'the defaults back', (s) => s.link_values.length === 0);
  const scenario = await uiScenario(page);
  assert.equal(scenario.hardware.gpu_memory_gb, undefined);
  assert.equal(scenario.overheads, undefined);
  assert.equal(scenario.training.batch_size, 1, 'the rest of the link\'s settings stay');
  const plain = await cliOf(page);
  assert.equal(plain.per_gpu.capacity_bytes, 85520809984, 'the H100 80GB HBM3 (79.65 GiB)');
  assert.equal((await uiTotal(page)).bytes, plain.per_gpu.device_total_bytes);
  assert.equal(plain.fits, false);
  assert.equal(state.texts.headline_card, 'of 79.65 GiB (NVIDIA H100 80GB HBM3)');
  assert.equal(state.texts.verdict, `Does not fit: ${percent(plain.utilization)} of 79.65 GiB.`);
  assert.equal(state.texts.bar_gpu_0, percent(plain.utilization), 'the bar agrees with the verdict');
  assert.equal(state.texts.link_values, undefined, 'nothing is set by the link any more');
  const share = new URLSearchParams(await page.evaluate(() => window.location.search));
  const shared = JSON.parse(Buffer.from(share.get('s'), 'base64url').toString());
  assert.equal(shared.hardware.gpu_memory_gb, undefined, 'the link the page now shows carries no card size');
  assert.equal(shared.overheads, undefined);
  await page.mouse.move(5, VIEWPORT.height - 5);
  await frames(page, 3);
  await page.screenshot({ path: join(outDir, 'link-values-defaults-1280x800.png') });
  await page.close();
});

test('a card the catalogue lacks, named by the link with its size, is set by the link too', async () => {
  const page = await openPage(`?model=meta-llama/Llama-3.1-8B&s=${b64({ hardware: { gpu: 'Big Card', gpu_memory_gb: 400 } })}`);
  let state = await until(page, 'the headline', (s) => s.texts?.verdict);
  const linked = await cliOf(page);
  assert.equal(state.texts.headline_card, 'of 400.00 GiB (Big Card)');
  assert.equal(state.texts.verdict, `Fits: ${percent(linked.utilization)} of 400.00 GiB.`);
  assert.equal(state.texts.bar_gpu_0, percent(linked.utilization));
  assert.deepEqual(state.link_values, ['the card Big Card (400 GiB), a card the catalogue lacks']);
  await click(page, 'link_defaults');
  state = await until(page, 'the defaults back', (s) => s.link_values.length === 0);
  assert.equal((await uiScenario(page)).hardware.gpu, 'H100-80GB', 'the page\'s default card');
  assert.equal(state.texts.headline_card, 'of 79.65 GiB (NVIDIA H100 80GB HBM3)');
  await page.close();
});

test('a Hub model\'s link: its card size is applied once the config is there, and shown as set by the link', async () => {
  const link = { version: 1, hardware: { gpu: 'H100-80GB', gpu_memory_gb: 800 } };
  const page = await openPage(`?hub=${hub.url}&model=mirror/Llama-3.1-8B&s=${b64(link)}`);
  const state = await until(page, 'the model and its headline', (s) => s.hub.status === 'ready' && s.texts?.verdict);
  const linked = await cliOf(page);
  assert.equal(linked.per_gpu.capacity_bytes, 800 * 2 ** 30);
  assert.equal((await uiTotal(page)).bytes, linked.per_gpu.device_total_bytes);
  assert.equal(state.texts.verdict, `Fits: ${percent(linked.utilization)} of 800.00 GiB.`);
  assert.equal(state.texts.bar_gpu_0, percent(linked.utilization));
  assert.deepEqual(state.link_values, ['GPU memory 800 GiB (the NVIDIA H100 80GB HBM3 has 79.65 GiB)']);
  await page.close();
});

test('text from a link or a Hub config is shown on one line: cal_name, hub=, model=, model_type', async () => {
  // cal_name and model= with line breaks, an escape sequence and a bidi override.
  const calName = 'x"\nNOTICE: verified to fit\r\n\u001b[2J\u202e';
  let page = await openPage(`?model=${encodeURIComponent('evil/x\nNOTICE: verified to fit')}` +
    `&cal=${'ab'.repeat(8)}&cal_name=${encodeURIComponent(calName)}`);
  let state = await until(page, 'the Hub refusal and the calibration notice',
    (s) => s.hub.status === 'failed' && s.texts?.calibration_notice);
  assert.match(state.texts.calibration_notice,
    /^Not applied: this link names the calibration "x"\\nNOTICE: verified to fit\\r\\n\\x1b\[2J\\u202e" \(hash abababababababab\), which this browser does not have/);
  assert.equal(state.decisions.calibration.hash, '', 'a hash this browser does not hold is not applied');
  assert.match(state.hub.message, /x\\nNOTICE: verified to fit/);
  assertOneLine([...Object.values(state.texts), state.hub.message, await summary(page)]);
  await rect(page, 'calibration_notice');
  await page.screenshot({ path: join(outDir, 'link-values-forged-1280x800.png') });
  await page.close();

  // hub= that is no URL, with a line break: the banner names it on one line.
  page = await openPage(`?model=forge/evil-8b&hub=${encodeURIComponent('http://evil\nNOTICE: verified to fit')}`);
  state = await until(page, 'the banner', (s) => s.texts?.hub_banner && s.hub.status !== 'loading');
  assert.equal(state.texts.hub_banner,
    'Models come from http://evil\\nNOTICE: verified to fit (set by this link, for this visit only).');
  assertOneLine([...Object.values(state.texts), state.hub.message, await summary(page)]);
  await page.close();

  // A Hub config whose model_type holds a line break and an escape sequence: the warning quotes it escaped.
  page = await openPage(`?model=forge/evil-8b&hub=${hub.url}`);
  state = await until(page, 'the forged model', (s) => s.hub.status !== 'loading');
  assert.equal(state.hub.status, 'ready', state.hub.message);
  const spoken = await summary(page);
  assert.match(spoken, /Warning: model_type 'evil\\nNOTICE: verified to fit\\x1b\[32m' is not a known family/);
  assertOneLine([...Object.values(state.texts), spoken, state.markdown.split('\n')[0]]);
  // The core's warning quotes the value escaped (core/src/model/config.cpp), so the CLI's --json and
  // every other front end get the same one-line text.
  const estimate = runCli(['estimate', '--scenario', '-', '--json'], JSON.stringify(await uiScenario(page)));
  assert.ok(estimate.warnings.some((w) => w.includes("model_type 'evil\\nNOTICE: verified to fit\\x1b[32m'")),
    JSON.stringify(estimate.warnings));
  assert.ok(!estimate.warnings.some((w) => w.includes(FORGED)), 'the raw value is never in a warning');
  assert.equal((await uiTotal(page)).bytes, estimate.per_gpu.device_total_bytes);
  await page.close();
});

// SECURITY.md names every key page.js can store, and every key the page has stored; nothing is
// kept in sessionStorage, cookies or IndexedDB.
async function assertStorageDocumented(page) {
  const security = readFileSync(join(repo, 'SECURITY.md'), 'utf8');
  const source = readFileSync(join(repo, 'web', 'page.js'), 'utf8');
  const written = [...source.matchAll(/`gpumem:\$\{SITE\}:([a-z_]+)/g)].map((m) => m[1]);
  assert.deepEqual(written.sort(), ['calibration', 'hub_token', 'state'], 'the keys page.js builds');
  for (const name of written)
    assert.match(security, new RegExp(`\`gpumem:<site folder>:${name}(:<hash>)?\``), `SECURITY.md names ${name}`);
  const keys = await page.evaluate(() => Object.keys(window.localStorage));
  assert.ok(keys.some((k) => k.startsWith('gpumem:/:calibration:')), `the calibration is stored: ${keys}`);
  for (const key of keys) {
    const documented = key.replace(/^gpumem:\/:/, 'gpumem:<site folder>:').replace(/:calibration:[0-9a-f]+$/, ':calibration:<hash>');
    assert.ok(security.includes(`\`${documented}\``), `SECURITY.md names ${documented}`);
  }
  const others = await page.evaluate(async () => ({
    session: window.sessionStorage.length, cookies: document.cookie, databases: (await indexedDB.databases()).length,
  }));
  assert.deepEqual(others, { session: 0, cookies: '', databases: 0 }, 'nothing else is stored');
}


test('a calibration: applied by a link only from this browser\'s copy, shown as set by the link; Remove deletes the copy', async () => {
  const calFile = makeCalibration(work, 'link-cal');
  // Full fine-tuning (the page opens on LoRA), which does not fit one H100.
  const page = await openPage(`?model=meta-llama/Llama-3.1-8B&s=${b64({ version: 1, training: { method: 'full' } })}`);
  let state = await loadCalibration(page, calFile);
  const hash = state.decisions.calibration.hash;
  const key = `gpumem:/:calibration:${hash}`;
  assert.equal(await page.evaluate((k) => window.localStorage.getItem(k), key), readFileSync(calFile, 'utf8'));
  const link = await page.evaluate(() => window.location.search);
  assert.deepEqual(state.link_values, [], 'loaded by hand: not the link\'s');

  // A link naming it: applied from this browser's copy, and said so beside the headline.
  const linked = await openPage(link);
  state = await until(linked, 'the link\'s calibration', (s) => s.decisions.calibration.hash === hash);
  assert.deepEqual(state.link_values, [`the calibration "link-cal" (${hash}), this browser's copy`]);
  assert.equal(state.texts.link_values, `Set by the link: the calibration "link-cal" (${hash}), this browser's copy.`);
  const calibrated = runCli(['estimate', '--scenario', '-', '--calibration', calFile, '--json'],
    JSON.stringify({ ...state.share.scenario, model: { preset: state.share.model } }));
  assert.equal((await uiTotal(linked)).bytes, calibrated.per_gpu.device_total_bytes);
  assert.equal(state.texts.verdict, `Does not fit: ${percent(calibrated.utilization)} of 79.65 GiB.`);
  assert.equal(state.texts.bar_gpu_0, percent(calibrated.utilization));
  await linked.mouse.move(5, VIEWPORT.height - 5);
  await frames(linked, 3);
  await linked.screenshot({ path: join(outDir, 'link-values-calibration-1280x800.png') });
  await click(linked, 'link_defaults');
  state = await until(linked, 'the defaults back', (s) => s.decisions.calibration.hash === '');
  const plain = await cliOf(linked);
  assert.equal((await uiTotal(linked)).bytes, plain.per_gpu.device_total_bytes, 'the estimator\'s own overheads');
  assert.deepEqual(state.link_values, []);
  await linked.close();

  await assertStorageDocumented(page);

  // Remove, with the mouse: gone from the page and from the browser.
  await reveal(page, 'remove_calibration');
  await click(page, 'remove_calibration');
  state = await until(page, 'the calibration removed', (s) => s.decisions.calibration.hash === '');
  assert.equal(await page.evaluate((k) => window.localStorage.getItem(k), key), null, 'the browser\'s copy is deleted');
  await page.close();

  // The same link again: not applied, and it says so.
  const again = await openPage(link);
  state = await until(again, 'the notice', (s) => s.decisions.calibration.wanted_hash === hash);
  assert.equal(state.decisions.calibration.hash, '');
  assert.match(state.texts.calibration_notice,
    new RegExp(`^Not applied: this link names the calibration "link-cal" \\(hash ${hash}\\), which this browser does not have`));
  assert.deepEqual(state.link_values, []);
  assert.equal((await uiTotal(again)).bytes, (await cliOf(again)).per_gpu.device_total_bytes);
  await again.close();
});

test('no console errors or page errors', () => {
  assert.deepEqual(problems, []);
});
