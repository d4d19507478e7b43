// The page imports the files `gpumem table --config-dir` reads (vram_calculator.py's format), through
// its real file input ("Import a file..."), driven with the mouse:
//   - data_types.json: its dtype becomes a weight format of the scenario ("formats"), picked in the
//     weight-format combo; gpu_types.json: its card joins the GPU combo, marked as imported, and picking
//     it names it in the scenario with its gpu_memory_gb.
//   - The headline is `gpumem estimate --scenario FILE` of the page's scenario (the CLI as a
//     subprocess), whose weights are the parameters x 0.75 bytes; the link reopens the same numbers.
//   - The import says what it added, in the CLI's words; a gpu_types.json without memory_gb is
//     refused naming the field; pasted text is known by its shape.
//
//   GPUMEM_CLI=build/native/core/cli/gpumem node --test tests/browser/catalogue_import.test.mjs
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import {
  click, cliPath as cli, frames, outDir, pageSuite, rect, reveal, until,
} from './harness.mjs';

const VIEWPORT = { width: 1280, height: 800 };
const work = mkdtempSync(join(tmpdir(), 'gpumem-catalogue-'));
const CONTROLS = 0.25;  // the wheel over the controls column

const { problems, openPage } = pageSuite(VIEWPORT, () => rm(work, { recursive: true, force: true }));


const uiScenario = (page) => page.evaluate(() => window.gpumem.uiScenario());
const uiTotal = (page) => page.evaluate(() => window.gpumem.uiTotal());

// `gpumem estimate --scenario FILE --json` of a scenario document.
function estimate(scenarioText, name) {
  const file = join(work, name);
  writeFileSync(file, scenarioText);
  const r = spawnSync(cli, ['estimate', '--scenario', file, '--json'], { encoding: 'utf8' });
  assert.equal(r.status, 0, `gpumem estimate --scenario ${file}: ${r.stderr}${r.stdout}`);
  return JSON.parse(r.stdout);
}

// Writes `doc` as DIR/NAME (the file name is what the page goes by) and imports it with the button.
async function importFile(page, dir, name, doc) {
  const path = join(work, dir);
  await mkdir(path, { recursive: true });
  writeFileSync(join(path, name), typeof doc === 'string' ? doc : JSON.stringify(doc, null, 2));
  await reveal(page, 'import');
  const [chooser] = await Promise.all([page.waitForEvent('filechooser'), click(page, 'import')]);
  await chooser.setFiles(join(path, name));
}



test('data_types.json and gpu_types.json: picked in the combos, the estimate is gpumem estimate\'s', async () => {
  const page = await openPage('?model=meta-llama/Llama-3.1-8B');
  await reveal(page, 'mode_inference', CONTROLS);
  await click(page, 'mode_inference');
  await page.waitForFunction(() => window.gpumem.uiScenario().mode === 'inference');

  await reveal(page, 'share_header');
  await click(page, 'share_header');
  // The README's example dtype, as vram_calculator.py's data_types.json writes it.
  await importFile(page, 'my_config', 'data_types.json', {
    your_custom_format: { bytes_per_param: 0.75, description: 'Your custom 6-bit format' },
  });
  let state = await until(page, 'the dtypes', (s) => s.import_message !== '' && !s.files_waiting_for_tools);
  assert.equal(state.import_message, 'data_types.json: 1 dtype(s) added', 'the CLI\'s words');
  await importFile(page, 'my_config', 'gpu_types.json', {
    gpu_types: [{ name: 'My Card 20GB', memory_gb: 20, category: 'consumer' }],
  });
  state = await until(page, 'the GPUs', (s) => s.imported_gpus.length === 1);
  assert.equal(state.import_message, 'gpu_types.json: 1 GPU(s) added');
  assert.deepEqual(state.imported_gpus, [{ name: 'My Card 20GB', memory_gb: 20, memory_bytes: 20 * 2 ** 30 }]);

  // Picked with the mouse: the weight format, then the card.
  await reveal(page, 'weight_format', CONTROLS);
  await click(page, 'weight_format');
  await click(page, 'own_format_1');
  await reveal(page, 'gpu', CONTROLS);
  const combo = await rect(page, 'gpu');
  await click(page, 'gpu');
  // Your own cards come first; the list opens on the selected card, so the wheel takes it to the top.
  for (let i = 0; i < 40 && (await rect(page, 'imported_gpu_1')).y < combo.y + combo.h; i++) {
    await page.mouse.move(combo.x + combo.w / 2, combo.y + combo.h + 120);
    await page.mouse.wheel(0, -120);
    await frames(page, 2);
  }
  await page.screenshot({ path: join(outDir, 'catalogue-import-gpu-combo-1280x800.png') });
  await click(page, 'imported_gpu_1');
  const scenario = await uiScenario(page);
  const scenarioText = JSON.stringify(scenario);
  assert.equal(scenario.inference.weight_format, 'your_custom_format');
  assert.deepEqual(scenario.formats, [{ id: 'your_custom_format', bits: 6, scope: 'all', about: 'Your custom 6-bit format' }]);
  assert.equal(scenario.hardware.gpu, 'My Card 20GB');
  assert.equal(scenario.hardware.gpu_memory_gb, 20);

  // The headline is the CLI's estimate of the same scenario; its weights are 0.75 bytes a parameter,
  // and the card is the imported one.
  const cliEstimate = estimate(scenarioText, 'page-scenario.json');
  await frames(page, 3);
  const total = await uiTotal(page);
  assert.equal(total.bytes, cliEstimate.per_gpu.device_total_bytes, 'the headline is gpumem estimate\'s');
  assert.equal(cliEstimate.per_gpu.components.weights, cliEstimate.parameters.total * 0.75);
  assert.equal(cliEstimate.scenario.hardware.gpu, 'My Card 20GB');
  assert.equal(cliEstimate.scenario.hardware.gpu_memory_gb, 20);
  // Against bf16 on the same card, the weights alone shrink to 3/8.
  const bf16 = estimate(JSON.stringify({ ...scenario, inference: { ...scenario.inference, weight_format: 'bf16' } }),
    'bf16.json');
  assert.equal(bf16.per_gpu.components.weights * 3 / 8, cliEstimate.per_gpu.components.weights);
  assert.ok(total.bytes < bf16.per_gpu.device_total_bytes);
  state = await until(page, 'the label', (s) => s.markdown !== '');
  assert.match(state.markdown, /1 x My Card 20GB/);

  await reveal(page, 'gpu', CONTROLS);
  await page.screenshot({ path: join(outDir, 'catalogue-import-1280x800.png') });

  // The link carries the scenario: a fresh page opens on the same numbers, the card listed as imported.
  const link = await page.evaluate(() => window.location.search);
  const again = await openPage(link);
  state = await until(again, 'the link\'s card', (s) => s.imported_gpus.length === 1);
  assert.equal(state.imported_gpus[0].name, 'My Card 20GB');
  const reopened = await uiScenario(again);
  assert.equal(reopened.inference.weight_format, 'your_custom_format');
  assert.deepEqual(reopened.hardware, scenario.hardware);
  assert.equal((await uiTotal(again)).bytes, total.bytes);
  await again.close();
  await page.close();
});

test('a gpu_types.json without memory_gb is refused naming the field; pasted text is known by its shape', async () => {
  const page = await openPage('?model=meta-llama/Llama-3.1-8B');
  await reveal(page, 'share_header');
  await click(page, 'share_header');
  const before = await uiScenario(page);
  await importFile(page, 'bad', 'gpu_types.json', '{"name": "RTX 5090"}');
  let state = await until(page, 'the refusal', (s) => s.import_message !== '' && !s.files_waiting_for_tools);
  assert.equal(state.import_message,
    'gpu_types.json: each GPU needs a "name" and a positive "memory_gb", got {"name":"RTX 5090"}: "memory_gb" is missing');
  assert.deepEqual(state.imported_gpus, []);
  assert.deepEqual(await uiScenario(page), before, 'nothing changed');
  await reveal(page, 'import');
  await page.screenshot({ path: join(outDir, 'catalogue-import-refused-1280x800.png') });

  // A malformed data_types.json: the dtype and its field.
  await importFile(page, 'bad', 'data_types.json', '{"six_bit": {"description": "no size"}}');
  state = await until(page, 'the dtype refusal', (s) => /six_bit/.test(s.import_message));
  assert.equal(state.import_message,
    'data_types.json: six_bit.bytes_per_param: must be a number of bytes above 0 and at most 8');

  // Pasted (typed into the paste box): no file name, so the shape says it is a gpu_types.json.
  await reveal(page, 'paste');
  await click(page, 'paste');
  await page.keyboard.type('[{"name": "Pasted Card", "memory_gb": 48}]', { delay: 5 });
  await frames(page, 3);
  await reveal(page, 'load_paste');
  await click(page, 'load_paste');
  state = await until(page, 'the pasted card', (s) => s.imported_gpus.length === 1);
  assert.equal(state.import_message, 'pasted JSON: 1 GPU(s) added');
  assert.equal(state.imported_gpus[0].memory_bytes, 48 * 2 ** 30);
  await page.close();
});

test('no console errors or page errors', () => {
  assert.deepEqual(problems, []);
});
