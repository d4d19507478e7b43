// The decision panels in the page (issue #20), driven by real mouse and keyboard input and checked
// against the native CLI on the page's own scenario:
//   - "What would make it fit": Llama-3.1-8B, full fine-tuning, one H100 (by a link) does not
//     fit; its suggestions are `gpumem fit`'s; Apply on LoRA puts that scenario into the calculator,
//     whose headline then equals `gpumem estimate` of it; Undo puts the scenario back.
//   - "Configs to run": the text is `gpumem export FORMAT`'s; Download saves it under its file name.
//   - "Peak memory against size": the chart is drawn and its max fit is `gpumem chart`'s; the SVG downloads.
//   - Calibration: a file from `gpumem calibrate` loaded through the file chooser sets every estimate
//     (equal to `gpumem estimate --calibration`); the link names it by hash; a browser without the file
//     is asked for it; a file from another gpumem version is refused with the core's message.
// Screenshots: tests/browser/out/decisions-*.png.
//
//   GPUMEM_CLI=build/native/core/cli/gpumem node --test tests/browser/decisions.test.mjs

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import {
  click, cliPath as cli, frames, launchBrowser, loadCalibration, makeCalibration, outDir, pageSuite, rect, reveal,
  until,
} from './harness.mjs';

const VIEWPORT = { width: 1280, height: 800 };
const work = mkdtempSync(join(tmpdir(), 'gpumem-decisions-'));

const { problems, openPage } = pageSuite(VIEWPORT, () => rm(work, { recursive: true, force: true }));

function runCli(args, input) {
  const r = spawnSync(cli, args, { input, encoding: 'utf8' });
  assert.equal(r.status, 0, `gpumem ${args.join(' ')}: ${r.stderr}`);
  return JSON.parse(r.stdout);
}


const uiScenario = (page) => page.evaluate(() => window.gpumem.uiScenario());
const uiTotal = (page) => page.evaluate(() => window.gpumem.uiTotal());




// Full fine-tuning of Llama-3.1-8B on one H100 (the page opens on a LoRA run that fits: asked for by the link).
const FULL = `?model=meta-llama/Llama-3.1-8B&s=${Buffer.from(JSON.stringify({ version: 1, training: { method: 'full' } })).toString('base64url')}`;

test('a run that does not fit: the suggestions are gpumem fit\'s, Apply takes one, Undo takes it back', async () => {
  const page = await openPage(FULL);
  let state = await until(page, 'the first fit', (s) => s.decisions.fit_count >= 1);
  const before = await uiScenario(page);
  assert.equal(before.model.preset, 'meta-llama/Llama-3.1-8B');
  assert.equal(state.decisions.fit.fits, false, 'full fine-tuning of an 8B model does not fit one H100');

  const fit = runCli(['fit', '--scenario', '-', '--json'], JSON.stringify(before));
  assert.ok(fit.suggestions.length >= 2, JSON.stringify(fit).slice(0, 500));
  // A larger card is named by the catalogue; two cards of one size may come in either order.
  const row = (s) => [s.set['hardware.gpu'] ? 'a larger card' : s.change, s.tier, s.device_total_bytes, s.fits];
  assert.deepEqual(state.decisions.fit.suggestions.map(row), fit.suggestions.map(row),
    'the page lists `gpumem fit`\'s suggestions');

  // LoRA (or the first suggestion when the core has none).
  let index = fit.suggestions.findIndex((s) => s.set['training.method'] === 'lora');
  if (index < 0) index = 0;
  const chosen = fit.suggestions[index];
  const fitCount = state.decisions.fit_count;
  await reveal(page, `fit_apply_${index + 1}`);
  await page.screenshot({ path: join(outDir, 'decisions-fit-1280x800.png') });
  await click(page, `fit_apply_${index + 1}`);
  state = await until(page, 'the suggestion applied', (s) => /^Applied/.test(s.decisions.message));
  assert.equal(state.decisions.undo, 1);

  const applied = await uiScenario(page);
  for (const [field, value] of Object.entries(chosen.set)) {
    const [section, key] = field.split('.');
    assert.deepEqual(applied[section][key], value, `${field} is set`);
  }
  const estimate = runCli(['estimate', '--scenario', '-', '--json'], JSON.stringify(chosen.scenario));
  const total = await uiTotal(page);
  assert.equal(total.bytes, estimate.per_gpu.device_total_bytes,
    'the headline equals `gpumem estimate` of the suggestion\'s scenario');
  assert.equal(total.bytes, chosen.device_total_bytes);
  state = await until(page, 'a fit of the new scenario', (s) => s.decisions.fit_count > fitCount);
  assert.equal(state.decisions.fit.fits, true, 'after the change the panel shows the headroom');
  await page.screenshot({ path: join(outDir, 'decisions-applied-1280x800.png') });

  // Undo: the scenario before Apply, and its figure.
  await reveal(page, 'fit_undo');
  await click(page, 'fit_undo');
  state = await until(page, 'the change undone', (s) => /^Undone/.test(s.decisions.message));
  assert.equal(state.decisions.undo, 0);
  assert.deepEqual(await uiScenario(page), before);
  assert.equal((await uiTotal(page)).bytes, fit.device_total_bytes);
  await page.close();
});

test('configs to run: the text is gpumem export\'s, the format is picked with the mouse, Download saves it', async () => {
  const page = await openPage();
  await reveal(page, 'export_header');
  await click(page, 'export_header');
  let state = await until(page, 'an export', (s) => s.decisions.export && s.decisions.export.ok === true);
  assert.equal(state.decisions.export_format, 'deepspeed', 'training opens on DeepSpeed');
  const scenario = JSON.stringify(await uiScenario(page));
  const deepspeed = runCli(['export', 'deepspeed', '--scenario', '-', '--json'], scenario);
  assert.equal(state.decisions.export.text, deepspeed.text);
  assert.equal(state.decisions.export.file_name, deepspeed.file_name);
  assert.deepEqual(state.decisions.export.notes, deepspeed.notes);

  await reveal(page, 'export_download');
  const [download] = await Promise.all([page.waitForEvent('download'), click(page, 'export_download')]);
  assert.equal(download.suggestedFilename(), deepspeed.file_name);
  assert.equal(readFileSync(await download.path(), 'utf8'), deepspeed.text);

  // Another format, picked in the combo with the mouse: the vllm line of this (training) scenario.
  await reveal(page, 'export_format');
  await click(page, 'export_format');
  await click(page, 'export_format_vllm');
  state = await until(page, 'the vllm answer', (s) => s.decisions.export_format === 'vllm');
  const vllmTraining = spawnSync(cli, ['export', 'vllm', '--scenario', '-', '--json'], { input: scenario, encoding: 'utf8' });
  if (vllmTraining.status === 0) assert.equal(state.decisions.export.text, JSON.parse(vllmTraining.stdout).text);
  else assert.deepEqual(state.decisions.export.errors, JSON.parse(vllmTraining.stdout).errors, 'the core\'s message');

  // Serving: the format follows the mode (vllm), and its line is the CLI's.
  const total = (await uiTotal(page)).estimates;
  await reveal(page, 'mode_inference');
  await click(page, 'mode_inference');
  await page.waitForFunction((n) => window.gpumem.uiTotal().estimates > n, total);
  state = await until(page, 'a vllm export', (s) => s.decisions.export_format === 'vllm' && s.decisions.export.ok);
  const vllm = runCli(['export', 'vllm', '--scenario', '-', '--json'], JSON.stringify(await uiScenario(page)));
  assert.equal(state.decisions.export.text, vllm.text);
  assert.match(vllm.text, /^vllm serve /);
  await reveal(page, 'export_text');
  await page.screenshot({ path: join(outDir, 'decisions-export-1280x800.png') });
  await page.close();
});

test('configs to run: a scenario the format cannot express shows the core\'s message, naming the field', async () => {
  const shared = { version: 1, engine: { type: 'fsdp' } };
  const page = await openPage(`?model=meta-llama/Llama-3.1-8B&s=${Buffer.from(JSON.stringify(shared)).toString('base64url')}`);
  await reveal(page, 'export_header');
  await click(page, 'export_header');
  const state = await until(page, 'the refusal', (s) => s.decisions.export && s.decisions.export.ok === false);
  const scenario = JSON.stringify(await uiScenario(page));
  const refused = spawnSync(cli, ['export', 'deepspeed', '--scenario', '-', '--json'], { input: scenario, encoding: 'utf8' });
  assert.equal(refused.status, 1);
  assert.deepEqual(state.decisions.export.errors, JSON.parse(refused.stdout).errors);
  assert.match(state.decisions.export.errors[0].message, /^engine\.type: must be deepspeed/);
  await reveal(page, 'export_error');
  await page.screenshot({ path: join(outDir, 'decisions-export-error-1280x800.png') });
  await page.close();
});

test('the chart: peak against sequence length and batch size, the card and the max fit, as an SVG too', async () => {
  // LoRA of Llama-3.1-8B: some lengths fit, so the max-fit point is on the chart.
  const shared = { version: 1, training: { method: 'lora' } };
  const page = await openPage(`?model=meta-llama/Llama-3.1-8B&s=${Buffer.from(JSON.stringify(shared)).toString('base64url')}`);
  await reveal(page, 'sweep_header');
  await click(page, 'sweep_header');
  const state = await until(page, 'the sweeps', (s) => s.decisions.sweep.count >= 1);
  const { size, batch } = state.decisions.sweep;
  assert.equal(size.ok, true, size.error);
  assert.equal(size.field, 'training.seq_len');
  assert.equal(batch.field, 'training.batch_size');
  const scenario = JSON.stringify(await uiScenario(page));
  const chart = runCli(['chart', '--x', 'training.seq_len', '--scenario', '-', '--json'], scenario);
  assert.equal(size.max_fit, chart.max_fit);
  assert.equal(size.points, chart.points.length);
  assert.ok(size.max_fit > 0, 'LoRA fits some lengths');

  const r = await reveal(page, 'sweep_size');
  assert.ok(r.w > 300 && r.h > 100, `the chart has room: ${JSON.stringify(r)}`);
  await page.mouse.move(r.x + r.w * 0.6, r.y + r.h * 0.4);  // the hover tooltip
  await frames(page, 3);
  await page.screenshot({ path: join(outDir, 'decisions-chart-1280x800.png') });

  await reveal(page, 'sweep_size_svg');
  const [download] = await Promise.all([page.waitForEvent('download'), click(page, 'sweep_size_svg')]);
  assert.match(download.suggestedFilename(), /\.svg$/);
  const svg = readFileSync(await download.path(), 'utf8');
  assert.match(svg, /^<svg[\s\S]*<\/svg>\s*$/);
  await page.close();
});

test('calibration: loaded with the file chooser, used by every estimate, named by the link, asked for where missing', async () => {
  const calFile = makeCalibration(work, 'browser-cal');
  const cal = JSON.parse(readFileSync(calFile, 'utf8'));
  assert.ok(Object.keys(cal.overheads).length > 0, `the calibration fits something: ${JSON.stringify(cal.overheads)}`);
  // The default settings (a link naming only the model): no overheads of the scenario's own.
  const before = (await (async () => {
    const p = await openPage('?model=meta-llama/Llama-3.1-8B');
    const t = await uiTotal(p);
    await p.close();
    return t;
  })()).bytes;
  const page = await openPage('?model=meta-llama/Llama-3.1-8B');
  let state = await loadCalibration(page, calFile);
  assert.equal(state.decisions.calibration.name, 'browser-cal');
  assert.equal(state.decisions.calibration.message, '');

  // The estimate is `gpumem estimate --calibration` of the page's own settings.
  assert.equal(state.share.calibration.hash, state.decisions.calibration.hash);
  const own = { ...state.share.scenario, model: { preset: state.share.model } };
  assert.equal(own.overheads, undefined, 'the link carries no overheads: only the calibration\'s name and hash');
  const estimate = runCli(['estimate', '--scenario', '-', '--calibration', calFile, '--json'], JSON.stringify(own));
  assert.equal(estimate.calibration.hash, state.decisions.calibration.hash);
  await frames(page, 3);
  assert.equal((await uiTotal(page)).bytes, estimate.per_gpu.device_total_bytes);
  assert.notEqual(estimate.per_gpu.device_total_bytes, before, 'the calibration changes the figure');
  for (const [k, v] of Object.entries(cal.overheads)) assert.equal((await uiScenario(page)).overheads[k], v);
  assert.match(state.markdown, new RegExp(`Calibration: browser-cal \\(${state.decisions.calibration.hash}\\)`));
  await page.screenshot({ path: join(outDir, 'decisions-calibration-1280x800.png') });

  // The link names it; this browser kept the file, so the link opens calibrated.
  const link = await page.evaluate(() => window.location.search);
  assert.match(link, new RegExp(`[?&]cal=${estimate.calibration.hash}(&|$)`));
  assert.match(link, /[?&]cal_name=browser-cal(&|$)/);
  const again = await openPage(link);
  state = await until(again, 'the link\'s calibration', (s) => s.decisions.calibration.hash === estimate.calibration.hash);
  assert.equal((await uiTotal(again)).bytes, estimate.per_gpu.device_total_bytes);
  await again.close();

  // Another browser has no copy: a notice asks for the file; loading it clears the notice.
  const other = await launchBrowser(VIEWPORT);
  try {
    const fresh = await openPage(link, other.context);
    state = await until(fresh, 'the notice', (s) => s.decisions.calibration.wanted_hash === estimate.calibration.hash);
    assert.equal(state.decisions.calibration.hash, '');
    assert.equal(state.share.calibration.hash, estimate.calibration.hash, 'the link keeps naming it');
    await rect(fresh, 'calibration_notice');
    await fresh.screenshot({ path: join(outDir, 'decisions-calibration-notice-1280x800.png') });
    const [picker] = await Promise.all([fresh.waitForEvent('filechooser'), click(fresh, 'calibration_notice_load')]);
    await picker.setFiles(calFile);
    state = await until(fresh, 'the notice answered', (s) => s.decisions.calibration.hash === estimate.calibration.hash);
    assert.equal(state.decisions.calibration.wanted_hash, '');
    await fresh.close();
  } finally {
    await other.context.close();
    await rm(other.userDataDir, { recursive: true, force: true });
  }

  // A file from another version: the core's message, and the calibration in use stays.
  const oldFile = join(work, 'old-cal.json');
  writeFileSync(oldFile, JSON.stringify({ ...cal, gpumem_version: '0.0.1' }));
  await reveal(page, 'load_calibration');
  const [chooser2] = await Promise.all([page.waitForEvent('filechooser'), click(page, 'load_calibration')]);
  await chooser2.setFiles(oldFile);
  state = await until(page, 'the refusal', (s) => s.decisions.calibration.message !== '');
  assert.match(state.decisions.calibration.message, /gpumem_version: the file was fitted by gpumem 0\.0\.1, this is gpumem /);
  assert.equal(state.decisions.calibration.hash, estimate.calibration.hash);
  await reveal(page, 'calibration_message');
  await page.screenshot({ path: join(outDir, 'decisions-calibration-refused-1280x800.png') });
  await page.close();
});

test('no console errors or page errors', () => {
  assert.deepEqual(problems, []);
});
