// The page takes the tools' configs and launch commands, as `gpumem check` reads them (issue #25,
// part 6), driven with the mouse and keyboard:
//   - "Import a file..." with two files picked at once (a real axolotl YAML and the DeepSpeed JSON
//     it names, tests/data/realconfigs): the scenario and the headline are `gpumem check`'s, the
//     model the bundled preset the YAML names, and the import area says what was read.
//   - Dropped on the page: the YAML alone asks for the JSON it names; dropping the JSON then loads
//     both. A text that is no config says what is read, and nothing changes.
//   - "Paste a config or command": a typed `vllm serve` line becomes the serving scenario (its
//     headline is `gpumem check -- vllm serve ...`'s); one naming a model that is not bundled
//     fetches it from the Hub (a mock, hub=) and applies the settings when it arrives.
//
//   GPUMEM_CLI=build/native/core/cli/gpumem node --test tests/browser/configs_import.test.mjs
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import {
  click, cliPath as cli, frames, outDir, pageSuite, repo, reveal, until,
} from './harness.mjs';
import { startMockHub } from './mock_hub.mjs';

const VIEWPORT = { width: 1280, height: 800 };
const hfHome = mkdtempSync(join(tmpdir(), 'gpumem-configs-'));
const suite = pageSuite(VIEWPORT, () => rm(hfHome, { recursive: true, force: true }));
const { problems, openPage } = suite;

const AXOLOTL = join(repo, 'tests/data/realconfigs/axolotl');
const YAML = 'examples/gpt-oss/gpt-oss-20b-fft-deepspeed-zero3.yaml';
const YAML_NAME = 'gpt-oss-20b-fft-deepspeed-zero3.yaml';
const DS = 'deepspeed_configs/zero3_bf16.json';
const DS_NAME = 'zero3_bf16.json';
const MODEL = 'openai/gpt-oss-20b';

let hub;
before(async () => { hub = await startMockHub(); });
after(() => hub?.close());

const uiScenario = (page) => page.evaluate(() => window.gpumem.uiScenario());
const uiTotal = (page) => page.evaluate(() => window.gpumem.uiTotal());

// `gpumem check ARGS --json` (offline, an empty Hugging Face cache: bundled presets only).
function check(args, cwd = repo) {
  const dash = args.indexOf('--');  // a command after --: the flags before it
  const words = dash < 0 ? [...args, '--json'] : [...args.slice(0, dash), '--json', ...args.slice(dash)];
  const r = spawnSync(cli, ['check', ...words],
    { cwd, encoding: 'utf8', env: { ...process.env, HF_HOME: hfHome, HF_HUB_OFFLINE: '1' } });
  assert.ok(r.status === 0 || r.status === 3, `gpumem check ${args.join(' ')}: exit ${r.status}: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

// The scenario as the page sent it, with the parts a preset model and the page's own keys leave out.
function comparable(scenario) {
  const { model, ...rest } = scenario;
  return rest;
}

// Files dropped on the page (a DataTransfer of File objects, as the browser hands a drop over).
function drop(page, files) {
  return page.evaluate((list) => {
    const data = new DataTransfer();
    for (const f of list) data.items.add(new File([f.text], f.name));
    document.dispatchEvent(new DragEvent('drop', { dataTransfer: data, bubbles: true, cancelable: true }));
  }, files);
}

// Clicks the paste box, types `text` with the keyboard and clicks its Import button.
async function pasteAndImport(page, text) {
  await reveal(page, 'paste');
  await click(page, 'paste');
  await page.keyboard.type(text, { delay: 2 });
  await frames(page, 3);
  await reveal(page, 'load_paste');
  await click(page, 'load_paste');
}

test('Import a file... takes an axolotl YAML and its DeepSpeed JSON together: gpumem check\'s scenario and figure', async () => {
  const native = check([YAML], AXOLOTL);
  const page = await openPage('?model=Qwen/Qwen2.5-7B');
  await reveal(page, 'share_header');
  await click(page, 'share_header');
  await reveal(page, 'import');
  const [chooser] = await Promise.all([page.waitForEvent('filechooser'), click(page, 'import')]);
  assert.equal(chooser.isMultiple(), true, 'the file input takes several files');
  await chooser.setFiles([join(AXOLOTL, YAML), join(AXOLOTL, DS)]);
  const state = await until(page, 'the configs read', (s) => s.config_check !== null);
  assert.equal(state.config_check.format, 'axolotl');
  assert.deepEqual(state.config_check.formats, native.check.formats);
  assert.deepEqual(state.config_check.files, [YAML_NAME, DS]);
  assert.deepEqual(state.config_check.read, native.check.read, 'the same keys read as the CLI\'s');
  assert.deepEqual(state.config_check.warnings, native.check.warnings);
  assert.deepEqual(state.config_check.assumptions, native.check.assumptions);
  assert.equal(state.config_model, MODEL);
  assert.equal(state.source, 'preset');
  assert.ok(state.import_message.startsWith(`Read axolotl + deepspeed (${YAML_NAME}, ${DS}): `), state.import_message);
  assert.ok(state.import_message.includes(`; model ${MODEL}`), state.import_message);

  const scenario = await uiScenario(page);
  assert.equal(scenario.model.preset ?? scenario.model, MODEL);
  assert.equal(scenario.engine.type, 'deepspeed');
  assert.equal(scenario.engine.zero_stage, 3);
  assert.equal(scenario.training.optimizer, 'adamw_8bit');
  assert.equal(scenario.training.seq_len, 4096);
  const total = await uiTotal(page);
  assert.equal(total.bytes, native.per_gpu.device_total_bytes, 'the headline is gpumem check\'s device total');
  // The page's scenario, run through the CLI, gives the same figure again.
  const file = join(hfHome, 'page-scenario.json');
  writeFileSync(file, JSON.stringify(scenario));
  const again = spawnSync(cli, ['estimate', '--scenario', file, '--json'], { encoding: 'utf8' });
  assert.equal(again.status, 0, again.stderr);
  assert.equal(JSON.parse(again.stdout).per_gpu.device_total_bytes, total.bytes);
  assert.deepEqual(comparable(JSON.parse(again.stdout).scenario), comparable(native.scenario));

  // What was read is listed under the box, its lists folded.
  await reveal(page, 'config_read');
  await page.mouse.move(VIEWPORT.width * 0.75, VIEWPORT.height / 2);
  await page.mouse.wheel(0, 360);
  await frames(page, 3);
  await page.screenshot({ path: join(outDir, 'configs-import-1280x800.png') });
  await page.close();
});

test('the config readers are a second module, fetched only when a config is first dropped (issue #29)', async () => {
  // web/serve.mjs serves with no caching: each page asks for every file it uses.
  const { context } = suite.browser;
  const fetched = [];
  const record = (request) => fetched.push(new URL(request.url()).pathname);
  context.on('request', record);
  try {
    const page = await openPage('?model=Qwen/Qwen2.5-7B', context);
    await frames(page, 10);
    assert.deepEqual(fetched.filter((p) => p.includes('gpumem_tools')), [], 'nothing of the tools at start');
    assert.ok(fetched.includes('/gpumem_app.wasm'), `the page's own module: ${fetched.join(', ')}`);
    await drop(page, [{ name: YAML_NAME, text: readFileSync(join(AXOLOTL, YAML), 'utf8') },
      { name: DS_NAME, text: readFileSync(join(AXOLOTL, DS), 'utf8') }]);
    const state = await until(page, 'the configs read', (s) => s.config_check !== null);
    assert.equal(state.files_waiting_for_tools, 0);
    assert.equal(state.config_check.format, 'axolotl');
    assert.ok(fetched.includes('/gpumem_tools.js') && fetched.includes('/gpumem_tools.wasm'),
      `the tools fetched for the drop: ${fetched.join(', ')}`);
    assert.equal((await uiTotal(page)).bytes, check([YAML], AXOLOTL).per_gpu.device_total_bytes);
    await page.close();
  } finally {
    context.off('request', record);
  }
});

test('when the config readers cannot be fetched the page says so, and still reads a scenario JSON', async () => {
  const page = await suite.browser.context.newPage();
  await page.setViewportSize(VIEWPORT);
  await page.route('**/gpumem_tools.js', (route) => route.abort('internetdisconnected'));
  await page.goto(`${suite.baseUrl}?model=Qwen/Qwen2.5-7B`);
  await page.evaluate(() => window.gpumemReady);
  await drop(page, [{ name: YAML_NAME, text: readFileSync(join(AXOLOTL, YAML), 'utf8') }]);
  let state = await until(page, 'the failure said', (s) => !s.files_waiting_for_tools && s.import_message !== '');
  assert.equal(state.import_message,
    'the config readers could not be fetched (gpumem_tools.js could not be fetched; reload the page to try again); ' +
    'nor a scenario, a model\'s config.json or a calibration (JSON)');
  assert.equal(state.config_check, null);
  // A scenario needs no reader: it still loads.
  await drop(page, [{ name: 'scenario.json', text: JSON.stringify({ version: 1, mode: 'inference' }) }]);
  state = await until(page, 'the scenario read', (s) => !s.files_waiting_for_tools && s.import_message === '');
  assert.equal((await uiScenario(page)).mode, 'inference');
  // "Configs to run" says why it has nothing, instead of computing forever.
  await reveal(page, 'export_header');
  await click(page, 'export_header');
  state = await until(page, 'the export refused', (s) => s.decisions.export !== null);
  assert.equal(state.decisions.export.ok, false);
  assert.match(JSON.stringify(state.decisions.export.errors), /could not be fetched \(gpumem_tools\.js could not be fetched/);
  await page.close();
});

test('dropped files: the YAML alone asks for the JSON it names, which then loads both; a text that is no config is refused', async () => {
  const page = await openPage('?model=Qwen/Qwen2.5-7B');
  const before = await uiScenario(page);
  await drop(page, [{ name: YAML_NAME, text: readFileSync(join(AXOLOTL, YAML), 'utf8') }]);
  let state = await until(page, 'the request for the JSON', (s) => s.import_message !== '' && !s.files_waiting_for_tools);
  assert.equal(state.import_message, `${YAML_NAME} names ${DS}, which was not given: drop or open ${DS} ` +
    'too (Import a file... takes several files at once)');
  assert.equal(state.held_config_files, 1);
  assert.equal(state.config_check, null);
  assert.deepEqual(await uiScenario(page), before, 'nothing changed');
  await reveal(page, 'share_header');
  await click(page, 'share_header');
  await reveal(page, 'import_message', 0.25);
  await page.screenshot({ path: join(outDir, 'configs-import-asks-1280x800.png') });

  await drop(page, [{ name: DS_NAME, text: readFileSync(join(AXOLOTL, DS), 'utf8') }]);
  state = await until(page, 'both read', (s) => s.config_check !== null);
  assert.equal(state.held_config_files, 0);
  assert.equal(state.config_check.format, 'axolotl');
  const native = check([YAML], AXOLOTL);
  assert.equal((await uiTotal(page)).bytes, native.per_gpu.device_total_bytes);

  // Both at once, in the other order: the same.
  await drop(page, [{ name: DS_NAME, text: readFileSync(join(AXOLOTL, DS), 'utf8') },
    { name: YAML_NAME, text: readFileSync(join(AXOLOTL, YAML), 'utf8') }]);
  await frames(page, 3);
  assert.equal((await uiTotal(page)).bytes, native.per_gpu.device_total_bytes);

  // Text that is no config: said, and the scenario stays.
  const loaded = await uiScenario(page);
  await drop(page, [{ name: 'notes.txt', text: 'remember to buy more GPUs\n' }]);
  state = await until(page, 'the refusal', (s) => /notes\.txt/.test(s.import_message));
  assert.match(state.import_message, /^notes\.txt is not a config or command gpumem reads: a DeepSpeed JSON/);
  assert.match(state.import_message, /nor a scenario, a model's config\.json or a calibration \(JSON\)$/);
  assert.deepEqual(await uiScenario(page), loaded);
  await page.close();
});

test('Paste a config or command: a typed vllm serve line becomes the serving scenario, gpumem check\'s figure', async () => {
  const command = 'vllm serve Qwen/Qwen2.5-7B --tensor-parallel-size 2 --max-model-len 8192 --gpu-memory-utilization 0.85';
  const native = check(['--', ...command.split(' ')]);
  const page = await openPage('?model=meta-llama/Llama-3.1-8B');
  await reveal(page, 'share_header');
  await click(page, 'share_header');
  await pasteAndImport(page, command);
  const state = await until(page, 'the command read', (s) => s.config_check !== null);
  assert.equal(state.config_check.format, 'vllm');
  assert.deepEqual(state.config_check.read, native.check.read);
  assert.equal(state.config_model, 'Qwen/Qwen2.5-7B');
  const scenario = await uiScenario(page);
  assert.equal(scenario.mode, 'inference');
  assert.equal(scenario.inference.engine, 'vllm');
  assert.equal(scenario.parallelism.tensor_parallel_size, 2);
  assert.equal(scenario.inference.context_len, 8192);
  assert.equal(scenario.hardware.gpu_memory_gb, undefined, 'the card\'s own size, no custom size');
  assert.equal(scenario.training, undefined, 'nothing the command does not set');
  assert.equal((await uiTotal(page)).bytes, native.per_gpu.device_total_bytes);
  await reveal(page, 'load_paste');
  await page.screenshot({ path: join(outDir, 'configs-paste-vllm-1280x800.png') });

  // An empty box says so.
  await click(page, 'load_paste');
  assert.equal((await page.evaluate(() => window.gpumem.uiState())).import_message,
    'the paste box is empty: paste a config, a command or a scenario first');
  await page.close();
});

test('a pasted command naming a model that is not bundled fetches it from the Hub, then applies its settings', async () => {
  const page = await openPage(`?hub=${hub.url}&model=meta-llama/Llama-3.1-8B`);
  await reveal(page, 'share_header');
  await click(page, 'share_header');
  await pasteAndImport(page, 'vllm serve mirror/Qwen2.5-7B --tensor-parallel-size 2 --max-model-len 4096');
  const state = await until(page, 'the Hub model and the settings',
    (s) => s.hub.status === 'ready' && s.hub.id === 'mirror/Qwen2.5-7B' && /^Read vllm/.test(s.import_message));
  assert.equal(state.source, 'hub');
  const scenario = await uiScenario(page);
  assert.equal(scenario.mode, 'inference');
  assert.equal(scenario.parallelism.tensor_parallel_size, 2);
  assert.equal(scenario.inference.context_len, 4096);
  assert.equal(scenario.model.name, 'mirror/Qwen2.5-7B');
  // The same model config, bundled as Qwen/Qwen2.5-7B: the same figure as gpumem check's.
  const native = check(['--model', 'Qwen/Qwen2.5-7B', '--', 'vllm', 'serve', 'mirror/Qwen2.5-7B',
    '--tensor-parallel-size', '2', '--max-model-len', '4096']);
  assert.equal((await uiTotal(page)).bytes, native.per_gpu.device_total_bytes);

  // A model the Hub does not have: the settings are not applied, and the page says why.
  const before = await uiScenario(page);
  await pasteAndImport(page, 'vllm serve missing/no-such-model --tensor-parallel-size 4');
  const failed = await until(page, 'the Hub failure', (s) => s.hub.status === 'failed');
  assert.match(failed.import_message,
    /^configs not loaded: their model missing\/no-such-model could not be fetched from the Hub \(.+\); load the model another way and import them again$/);
  assert.equal((await uiScenario(page)).parallelism.tensor_parallel_size, before.parallelism.tensor_parallel_size);
  await page.close();
});

test('no console errors or page errors (but the mock Hub\'s 404s for the missing model)', () => {
  const expected = (p) => p.includes(`${hub.url}/api/models/missing/`) || p.includes(`${hub.url}/missing/`);
  assert.deepEqual(problems.filter((p) => !(expected(p) && /status of 404/.test(p))), []);
});
