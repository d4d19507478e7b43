// Issue #30, part A, in the page:
//   - the page opens on a run people make and that fits (LoRA of Llama-3.1-8B on one H100, checkpointing on by
//     the core's default for adapters), the CLI's verdict on the same scenario;
//   - a serving view that agrees with itself: vLLM serving Llama-3.1-70B to 32 users at 8k context on two H100s
//     is one tensor-parallel server (said beside the GPU count), its verdict is the sequences its KV pool holds
//     (the CLI's numbers), and the fit panel's rows are told apart by the pool, not by the budget they all fill.
// Screenshots: tests/browser/out/serving-*.png.
//
//   GPUMEM_CLI=build/native/core/cli/gpumem GPUMEM_SITE_DIR=build/wasm/site node --test tests/browser/serving_view.test.mjs

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';

import { cliPath as cli, click, outDir, pageSuite, reveal, until } from './harness.mjs';

const VIEWPORT = { width: 1280, height: 800 };
const { problems, openPage } = pageSuite(VIEWPORT);

function runCli(args, input) {
  const r = spawnSync(cli, args, { input, encoding: 'utf8' });
  assert.equal(r.status, 0, `gpumem ${args.join(' ')}: ${r.stderr}`);
  return JSON.parse(r.stdout);
}
const b64 = (value) => Buffer.from(JSON.stringify(value)).toString('base64url');
const uiScenario = (page) => page.evaluate(() => window.gpumem.uiScenario());
const count = (n) => n.toLocaleString('en-US');  // 8192 -> 8,192, as the page and the CLI group it

test('the page opens on a LoRA fine-tune of Llama-3.1-8B that fits one H100, checkpointing on', async () => {
  const page = await openPage();
  const state = await until(page, 'the headline', (s) => s.texts?.verdict);
  const scenario = await uiScenario(page);
  assert.equal(scenario.model.preset, 'meta-llama/Llama-3.1-8B');
  assert.equal(scenario.training.method, 'lora');
  const r = runCli(['estimate', '--scenario', '-', '--json'], JSON.stringify(scenario));
  assert.equal(r.verdict, 'fits', 'the opening scenario fits with its error band');
  assert.equal(r.scenario.training.activation_checkpointing, 'full');
  assert.ok(r.defaults_applied.some((d) => /activation_checkpointing = "full" \(what LoRA and QLoRA/.test(d)));
  assert.equal((await page.evaluate(() => window.gpumem.uiTotal())).bytes, r.per_gpu.device_total_bytes);
  assert.match(state.texts.verdict, /^Fits: \d+ % of 79\.65 GiB\.$/);
  await page.screenshot({ path: join(outDir, 'serving-opening-1280x800.png') });
  await page.close();
});

test('vLLM on two H100s: one tensor-parallel server, judged by the sequences its pool holds, fit rows by the pool', async () => {
  const link = {
    version: 1, mode: 'inference',
    inference: { engine: 'vllm', batch_size: 32, context_len: 8192 },
    hardware: { gpu: 'H100-80GB', num_gpus: 2 },
  };
  const page = await openPage(`?model=meta-llama/Llama-3.1-70B-Instruct&s=${b64(link)}`);
  let state = await until(page, 'the serving verdict', (s) => /sequences/.test(s.texts?.verdict ?? ''));
  const scenario = await uiScenario(page);
  assert.ok([undefined, 2].includes(scenario.parallelism?.tensor_parallel_size), 'the core\'s layout, or the same');
  const r = runCli(['estimate', '--scenario', '-', '--json'], JSON.stringify(scenario));
  assert.equal(r.scenario.parallelism.tensor_parallel_size, 2);
  const sv = r.serving;
  assert.equal(sv.fills_budget, true);
  const verdict = `${r.fits ? 'Fits' : 'Does not fit'}: ${count(sv.max_concurrent_sequences)} of 32 sequences of `
    + `8,192 tokens fit (KV pool `;
  assert.ok(state.texts.verdict.startsWith(verdict), `${state.texts.verdict} starts with ${verdict}`);
  assert.match(state.texts.verdict, / per GPU\)\.$/);
  assert.equal((await page.evaluate(() => window.gpumem.uiTotal())).bytes, r.per_gpu.device_total_bytes);
  // Reserved is never above the device total.
  assert.ok(r.per_gpu.peak_reserved_bytes <= r.per_gpu.device_total_bytes);
  // The layout in words beside the GPU count.
  await reveal(page, 'num_gpus');
  state = await until(page, 'the layout', (s) => s.texts?.layout);
  assert.equal(state.texts.layout, 'one vllm server split over 2 GPUs (tensor parallel 2)');
  assert.equal(state.texts.layout, r.layout.text);
  await page.screenshot({ path: join(outDir, 'serving-layout-1280x800.png') });

  // The fit panel: gpumem fit's runs, each holding the 32 sequences, told apart by the pool.
  state = await until(page, 'the fit', (s) => s.decisions.fit_count >= 1 && s.decisions.fit.suggestions);
  const fit = runCli(['fit', '--scenario', '-', '--json'], JSON.stringify(scenario));
  const rows = state.decisions.fit.suggestions;
  assert.deepEqual(rows.map((s) => s.change), fit.suggestions.map((s) => s.change));
  assert.ok(rows.length >= 2);
  // Each row holds the sequences it asks for: the 32, or, in the data tier, one of the longest context the pool holds.
  for (const row of rows) {
    assert.equal(row.serving.fills_budget, true, row.change);
    const asked = row.change.endsWith('one sequence at a time') ? 1 : 32;
    assert.equal(row.serving.requested_sequences, asked, row.change);
    assert.ok(row.serving.max_concurrent_sequences >= asked, `${row.change}: ${row.serving.max_concurrent_sequences}`);
  }
  await reveal(page, 'fit_apply_1');
  await page.screenshot({ path: join(outDir, 'serving-fit-1280x800.png') });

  // The export of this run says it does not fit, in the file and in the panel.
  await reveal(page, 'export_header');
  await click(page, 'export_header');
  state = await until(page, 'an export', (s) => s.decisions.export && s.decisions.export.ok === true);
  assert.match(state.decisions.export.text, /^# gpumem: this run does not fit: /);
  await reveal(page, 'export_fit_note');
  state = await until(page, 'the export note', (s) => s.texts?.export_fit_note);
  assert.match(state.texts.export_fit_note, /^This run does not fit: .* \(the file's first line says so\)\.$/);
  await page.screenshot({ path: join(outDir, 'serving-export-1280x800.png') });
  await page.close();
});

test('an export says what its file does not carry, in the panel and in the file, as the CLI does', async () => {
  // An int4 checkpoint is not a flag of `vllm serve`: the command of the model id runs its bf16 weights.
  const link = {
    version: 1, mode: 'inference',
    inference: { engine: 'vllm', weight_format: 'int4', batch_size: 8, context_len: 8192 },
    hardware: { gpu: 'H100-80GB', num_gpus: 1 },
  };
  const page = await openPage(`?model=meta-llama/Llama-3.1-8B&s=${b64(link)}`);
  await until(page, 'the verdict', (s) => s.texts?.verdict);
  await reveal(page, 'export_header');
  await click(page, 'export_header');
  let state = await until(page, 'an export', (s) => s.decisions.export && s.decisions.export.ok === true);
  const scenario = await uiScenario(page);
  const cliExport = runCli(['export', state.decisions.export.format, '--scenario', '-', '--json'], JSON.stringify(scenario));
  assert.equal(state.decisions.export.format, 'vllm');
  assert.deepEqual(cliExport.dropped.map((d) => d.field), ['inference.weight_format']);
  assert.equal(state.decisions.export.text, cliExport.text);
  assert.match(state.decisions.export.text, /^# gpumem: inference\.weight_format = "int4" is not in the file: /m);
  await reveal(page, 'export_dropped');
  state = await until(page, 'the dropped note', (s) => s.texts?.export_dropped);
  assert.match(state.texts.export_dropped, /^This file does not run the estimated job:\n- inference\.weight_format = "int4" is not in the file: as written it runs "bf16"\n\(The file's comments say so too\.\)$/);
  await page.screenshot({ path: join(outDir, 'serving-export-dropped-1280x800.png') });
  await page.close();
});

test('no console errors or page errors', () => {
  assert.deepEqual(problems, []);
});
