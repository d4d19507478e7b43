// Exact values on the page, with a real mouse and keyboard: every numeric control can be typed into
// (the sliders' Edit button, double-click and Ctrl+click open an <input inputmode="numeric"> over the
// control; Enter commits, Escape cancels, text out of range is refused naming the field and range),
// the sliders snap to the values people use, the GPU list is sorted and filtered as you type, the
// "0 means default" fields say what the default is, and "Copy link" copies the page's link.
// The figures are checked against the CLI.
//
//   GPUMEM_CLI=build/native/core/cli/gpumem GPUMEM_SITE_DIR=build/wasm/site node --test tests/browser/values.test.mjs
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';

import { cliPath, click, ctrlClick, frames, outDir, pageSuite, pressKey, rect, reveal, typeIntoSlider, until } from './harness.mjs';

const VIEWPORT = { width: 1280, height: 800 };
const CONTROLS = 0.25;   // the wheel over the controls column
const suite = pageSuite(VIEWPORT);

const scenarioOf = (page) => page.evaluate(() => window.gpumem.uiScenario());
const cliTotal = (scenario) => JSON.parse(execFileSync(cliPath, ['estimate', '--scenario', '-', '--json'],
  { input: JSON.stringify(scenario), encoding: 'utf8' })).per_gpu.device_total_bytes;
const editorOf = (page) => page.$eval('#number-editor', (e) => ({
  value: e.value, inputMode: e.inputMode, label: e.getAttribute('aria-label'), focused: document.activeElement === e,
})).catch(() => null);

// Opens the typed-value box of `name` with its Edit button.
async function openEditor(page, name) {
  await reveal(page, `edit_${name}`, CONTROLS);
  await click(page, `edit_${name}`);
  const editor = await editorOf(page);
  assert.ok(editor, `the Edit button of ${name} opened no box`);
  return editor;
}

test('typing 8192 into the sequence length gives exactly 8192, and the CLI\'s figure for it', async () => {
  const page = await suite.openPage('?model=meta-llama/Llama-3.1-8B');
  const editor = await openEditor(page, 'seq_len');
  assert.equal(editor.inputMode, 'numeric', 'the phone opens its number keyboard');
  assert.equal(editor.label, 'Sequence length, 128 to 131072');
  assert.ok(editor.focused, 'the box has the keyboard');
  assert.equal(editor.value, String((await scenarioOf(page)).training.seq_len), 'it starts from the value shown');
  await page.keyboard.type('8192', { delay: 10 });
  await page.keyboard.press('Enter');
  await frames(page, 4);
  assert.equal(await editorOf(page), null, 'Enter closes the box');
  const scenario = await scenarioOf(page);
  assert.equal(scenario.training.seq_len, 8192);
  const total = await page.evaluate(() => window.gpumem.uiTotal());
  assert.equal(total.bytes, cliTotal(scenario), 'the headline is the CLI\'s figure for the typed value');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'canvas', 'focus is back on the canvas');
  await writeFile(join(outDir, 'values-typed-8192.png'), await page.screenshot());
  await page.close();
});

test('text out of range or not a number is refused naming the field and the range; Escape cancels', async () => {
  const page = await suite.openPage('?model=meta-llama/Llama-3.1-8B');
  const before = (await scenarioOf(page)).training.seq_len;
  await openEditor(page, 'seq_len');
  await page.keyboard.type('999999', { delay: 10 });
  await page.keyboard.press('Enter');
  const refused = await until(page, 'the refusal', (s) => (s.texts.number_message ?? '') !== '');
  assert.equal(refused.texts.number_message,
    'Sequence length: "999999" is out of range; allowed: a whole number from 128 to 131072.');
  const editor = await editorOf(page);
  assert.ok(editor, 'the box stays open to correct');
  assert.equal(await page.$eval('#number-editor', (e) => e.getAttribute('aria-invalid')), 'true');
  assert.equal(await page.$eval('#focus-mirror', (e) => e.textContent), refused.texts.number_message,
    'the refusal is read out');
  assert.equal((await scenarioOf(page)).training.seq_len, before, 'nothing changed');
  await writeFile(join(outDir, 'values-refused.png'), await page.screenshot());

  await page.keyboard.press('Control+A');
  await page.keyboard.type('4k2', { delay: 10 });
  await page.keyboard.press('Enter');
  await frames(page, 3);
  assert.match((await page.evaluate(() => window.gpumem.uiState())).texts.number_message, /^Sequence length: "4k2" is not a number; allowed/);
  await page.keyboard.press('Escape');
  await frames(page, 3);
  assert.equal(await editorOf(page), null, 'Escape closes the box');
  const state = await page.evaluate(() => window.gpumem.uiState());
  assert.equal(state.texts.number_message, undefined, 'Escape clears the message');
  assert.equal((await scenarioOf(page)).training.seq_len, before, 'and changes nothing');
  await page.close();
});

test('double-click and Ctrl+click on a slider open the box without moving the slider', async () => {
  const page = await suite.openPage('?model=meta-llama/Llama-3.1-8B');
  const before = (await scenarioOf(page)).training.batch_size;
  const slider = await reveal(page, 'batch_size', CONTROLS);
  // A double-click as a hand makes one (Dear ImGui samples the button once a frame; 0.3 s at most between
  // the presses), on the value's own place so that no estimate slows the frames between them.
  await page.mouse.move(slider.x + 2, slider.y + slider.h / 2);
  for (const clickCount of [1, 2]) {
    await page.mouse.down({ clickCount });
    await frames(page, 1);
    await page.mouse.up({ clickCount });
    await frames(page, 1);
  }
  await frames(page, 3);
  const editor = await editorOf(page);
  assert.ok(editor, 'double-click opened the box');
  assert.equal(editor.value, String(before), 'the value before the click');
  await page.keyboard.press('Escape');
  await frames(page, 3);
  assert.equal((await scenarioOf(page)).training.batch_size, before, 'the double-click left the value');
  // Ctrl+click in the middle: Dear ImGui's press drags the slider there; the box opens on the value before it.
  await ctrlClick(page, await rect(page, 'batch_size'));
  await page.keyboard.up('Control');
  await frames(page, 3);
  assert.equal((await editorOf(page))?.value, String(before), 'Ctrl+click opened the box on the value before the press');
  await page.keyboard.press('Escape');
  await frames(page, 3);
  assert.equal((await scenarioOf(page)).training.batch_size, before, 'and Escape left it');
  // Ctrl+click, then a value no slider stop has (the harness's way, as other tests use it).
  await typeIntoSlider(page, await rect(page, 'batch_size'), 3);
  assert.equal((await scenarioOf(page)).training.batch_size, 3);
  // The box opened on a press: its release still reached the app (no button left held down).
  await click(page, 'edit_batch_size');
  assert.equal((await editorOf(page))?.value, '3', 'a later click still works');
  await page.keyboard.press('Escape');
  await page.close();
});

// Every value a drag across the slider lands on, left to right.
async function dragAcross(page, name) {
  const slider = await reveal(page, name, CONTROLS);
  const y = slider.y + slider.h / 2;
  const seen = [];
  await page.mouse.move(slider.x + 1, y);
  await page.mouse.down();
  for (let x = slider.x + 1; x <= slider.x + slider.w - 1; x += 3) {
    await page.mouse.move(x, y);
    await frames(page, 1);
    const s = await scenarioOf(page);
    const v = name === 'seq_len' ? s.training.seq_len : s.training.batch_size;
    if (seen[seen.length - 1] !== v) seen.push(v);
  }
  await page.mouse.up();
  await frames(page, 2);
  return seen;
}

test('a drag lands on snapped values: powers of two for the batch, 1024 multiples for the sequence', async () => {
  const page = await suite.openPage('?model=meta-llama/Llama-3.1-8B');
  const batches = await dragAcross(page, 'batch_size');
  assert.deepEqual(batches, [1, 2, 4, 8, 16, 32, 64, 128, 256, 512], 'every power of two, in order, nothing else');
  const lengths = await dragAcross(page, 'seq_len');
  for (const v of lengths) assert.ok(v < 1024 ? (v & (v - 1)) === 0 : v % 1024 === 0, `${v} is not a snapped length`);
  for (const v of [128, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072]) assert.ok(lengths.includes(v), `${v} was not reachable: ${lengths}`);
  assert.deepEqual(lengths, [...lengths].sort((a, b) => a - b), 'in order');
  console.log(`# sequence-length stops reached by a drag: ${lengths.length} (${lengths.join(', ')})`);
  await page.close();
});

test('the GPU list is sorted by vendor and memory and filtered as you type; Enter takes the first', async () => {
  const page = await suite.openPage('?model=meta-llama/Llama-3.1-8B');
  await reveal(page, 'gpu', CONTROLS);
  await click(page, 'gpu');
  let state = await page.evaluate(() => window.gpumem.uiState());
  const all = Number(state.focus_text.match(/(\d+) of (\d+) cards shown/)?.[2]);
  assert.ok(all > 20, `the filter says how many cards it shows: ${state.focus_text}`);
  await page.keyboard.type('H100', { delay: 20 });
  await frames(page, 3);
  state = await page.evaluate(() => window.gpumem.uiState());
  const [, shown] = state.focus_text.match(/^GPU filter, text field, H100, (\d+) of \d+ cards shown$/) ?? [];
  assert.ok(Number(shown) >= 1 && Number(shown) < all, `typing H100 filters the list: ${state.focus_text}`);
  await writeFile(join(outDir, 'values-gpu-filter.png'), await page.screenshot());
  await pressKey(page, 'Enter');
  await frames(page, 3);
  const gpu = (await scenarioOf(page)).hardware.gpu;
  assert.match(gpu, /H100/, 'Enter took the first H100');
  // Sorted by vendor (the name's first word), then memory, then name: the first H100 shown is the smallest.
  const { gpus } = JSON.parse(execFileSync(cliPath, ['presets', '--json'], { encoding: 'utf8' }));
  const h100 = gpus.filter((c) => /h100/i.test(c.name) || /h100/i.test(c.id))
    .sort((a, b) => a.memory_bytes - b.memory_bytes || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  assert.equal(gpu, h100[0].id);
  await page.close();
});

test('"0 means default" fields show the default the core used', async () => {
  const page = await suite.openPage('?model=meta-llama/Llama-3.1-8B');
  const scenario = await scenarioOf(page);
  assert.equal(scenario.training.method, 'lora', 'the page opens on LoRA');
  assert.equal(scenario.training.lora?.alpha, undefined, 'alpha is left to the core');
  const cli = JSON.parse(execFileSync(cliPath, ['estimate', '--scenario', '-', '--json'], { input: JSON.stringify(scenario), encoding: 'utf8' }));
  await reveal(page, 'lora_alpha', CONTROLS);
  await click(page, 'lora_alpha');
  await frames(page, 3);
  let state = await page.evaluate(() => window.gpumem.uiState());
  assert.equal(state.focus_text, `LoRA alpha, number field, default (${cli.scenario.training.lora.alpha})`);
  await reveal(page, 'gpu_memory_gb', CONTROLS);
  await click(page, 'gpu_memory_gb');
  await frames(page, 3);
  state = await page.evaluate(() => window.gpumem.uiState());
  const gib = cli.scenario.hardware.gpu_memory_gb;
  assert.equal(state.focus_text, `Custom size (GiB), number field, default (${Number(gib.toPrecision(6))})`);
  await writeFile(join(outDir, 'values-defaults.png'), await page.screenshot());
  await page.close();
});

test('pipeline micro-batches and vLLM\'s batched tokens show default (the core\'s value) on screen, and take a typed value', async () => {
  // Pipeline micro-batches: under More > More training switches, with two pipeline stages (a link: More opens).
  const b64 = (doc) => Buffer.from(JSON.stringify(doc)).toString('base64url');
  let page = await suite.openPage(`?model=meta-llama/Llama-3.1-8B&s=${b64({ version: 1, parallelism: { pipeline_parallel_size: 2 },
    hardware: { num_gpus: 2 } })}`);
  let scenario = await scenarioOf(page);
  let cli = JSON.parse(execFileSync(cliPath, ['estimate', '--scenario', '-', '--json'], { input: JSON.stringify(scenario), encoding: 'utf8' }));
  const micro = cli.scenario.training.pipeline_microbatches;
  assert.ok(micro >= 2, `the core chose ${micro}`);
  await reveal(page, 'training_switches', CONTROLS);
  await click(page, 'training_switches');
  await reveal(page, 'pipeline_microbatches', CONTROLS);
  // Shown as the default; typing 0 (a click selects the shown text) keeps it there.
  assert.equal((await page.evaluate(() => window.gpumem.uiState())).texts.pipeline_microbatches, `default (${micro})`);
  const typeInto = async (name, text) => {
    await click(page, name);
    await page.keyboard.type(text, { delay: 20 });
    await pressKey(page, 'Enter');
    await frames(page, 3);
  };
  await typeInto('pipeline_microbatches', '0');
  assert.equal((await scenarioOf(page)).training.pipeline_microbatches, undefined, '0 leaves the default');
  let state = await page.evaluate(() => window.gpumem.uiState());
  assert.equal(state.texts.pipeline_microbatches, `default (${micro})`, 'the field shows the default, not 0');
  await writeFile(join(outDir, 'values-microbatches-default.png'), await page.screenshot());
  // A click selects the shown text; typing replaces it.
  await typeInto('pipeline_microbatches', '6');
  scenario = await scenarioOf(page);
  assert.equal(scenario.training.pipeline_microbatches, 6);
  state = await page.evaluate(() => window.gpumem.uiState());
  assert.equal(state.texts.pipeline_microbatches, '6');
  await page.close();

  // vLLM's batched tokens (a link choosing vLLM).
  page = await suite.openPage(`?model=meta-llama/Llama-3.1-8B&s=${b64({ version: 1, mode: 'inference', inference: { engine: 'vllm' } })}`);
  scenario = await scenarioOf(page);
  cli = JSON.parse(execFileSync(cliPath, ['estimate', '--scenario', '-', '--json'], { input: JSON.stringify(scenario), encoding: 'utf8' }));
  await reveal(page, 'max_num_batched_tokens', CONTROLS);
  assert.equal((await page.evaluate(() => window.gpumem.uiState())).texts.max_num_batched_tokens,
    `default (${cli.scenario.inference.max_num_batched_tokens})`);
  await typeInto('max_num_batched_tokens', '0');
  assert.equal((await scenarioOf(page)).inference.max_num_batched_tokens, undefined, '0 leaves the default');
  state = await page.evaluate(() => window.gpumem.uiState());
  assert.equal(state.texts.max_num_batched_tokens, `default (${cli.scenario.inference.max_num_batched_tokens})`);
  await click(page, 'max_num_batched_tokens');
  await frames(page, 2);
  state = await page.evaluate(() => window.gpumem.uiState());
  assert.equal(state.focus_text, `Batched tokens, number field, default (${cli.scenario.inference.max_num_batched_tokens})`,
    'the screen reader hears the same, the name unchanged');
  await writeFile(join(outDir, 'values-batched-default.png'), await page.screenshot());
  await page.close();
});

test('the custom card size is under More; a link that sets it opens More', async () => {
  let page = await suite.openPage('?model=meta-llama/Llama-3.1-8B');
  let layout = await page.evaluate(() => window.gpumem.uiLayout());
  assert.ok(layout.num_gpus && layout.more_header, 'the first screen has the GPUs and More');
  assert.equal(layout.gpu_memory_gb, undefined, 'no custom size while More is closed');
  await page.close();
  const s = Buffer.from(JSON.stringify({ version: 1, hardware: { gpu: 'H100-80GB', gpu_memory_gb: 40 } })).toString('base64url');
  page = await suite.openPage(`?model=meta-llama/Llama-3.1-8B&s=${s}`);
  await frames(page, 5);
  const state = await page.evaluate(() => window.gpumem.uiState());
  assert.equal(state.more_open, true, 'the link opened More');
  layout = await page.evaluate(() => window.gpumem.uiLayout());
  assert.ok(layout.gpu_memory_gb, 'the custom size is drawn under More');
  assert.ok(layout.gpu_memory_gb.y > layout.more_header.y, 'below the More header');
  assert.equal((await scenarioOf(page)).hardware.gpu_memory_gb, 40);
  await page.close();
});

test('"Copy link" copies the page\'s link, settings included', async () => {
  const page = await suite.openPage('?model=meta-llama/Llama-3.1-8B');
  await suite.browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: suite.baseUrl.replace(/\/$/, '') });
  const editor = await openEditor(page, 'seq_len');
  assert.ok(editor);
  await page.keyboard.type('8192');
  await page.keyboard.press('Enter');
  await frames(page, 4);
  await page.click('#copy-link');
  assert.equal(await page.$eval('#copy-link', (b) => b.textContent), 'Link copied');
  const copied = await page.evaluate(() => navigator.clipboard.readText());
  assert.equal(copied, await page.evaluate(() => window.location.href));
  const s = new URL(copied).searchParams.get('s');
  assert.equal(JSON.parse(Buffer.from(s, 'base64url').toString()).training.seq_len, 8192, 'the link carries the typed value');
  await page.close();
});

test('no console errors or page errors', () => {
  assert.deepEqual(suite.problems, []);
});
