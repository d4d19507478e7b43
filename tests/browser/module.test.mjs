// The WebAssembly module (gpumem.js, target gpumem_wasm) under node: the JS contract of
// wasm/README.md, and no trap on bad input.
//
//   node --test tests/browser/
//
// GPUMEM_WASM_JS overrides the module's path (default build/wasm/wasm/gpumem.js).

import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { before, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const modulePath = resolve(process.env.GPUMEM_WASM_JS ?? join(here, '..', '..', 'build', 'wasm', 'wasm', 'gpumem.js'));
const require = createRequire(import.meta.url);

let gpumem;

before(async () => {
  assert.ok(existsSync(modulePath), `no module at ${modulePath}: build the gpumem_wasm target`);
  gpumem = await require(modulePath)();
});

const estimate = (scenario) => JSON.parse(gpumem.estimate(typeof scenario === 'string' ? scenario : JSON.stringify(scenario)));

test('version, presets and GPUs', () => {
  assert.match(gpumem.version(), /^\d+\.\d+\.\d+/);
  const catalogue = JSON.parse(gpumem.presets());
  assert.ok(Array.isArray(catalogue.models) && catalogue.models.length > 0);
  assert.ok(Array.isArray(catalogue.gpus) && catalogue.gpus.length > 0);
  for (const m of catalogue.models) assert.equal(typeof m.id, 'string');
});

test('a preset estimates, and the three figures are ordered', () => {
  const { models } = JSON.parse(gpumem.presets());
  const result = estimate({ model: { preset: models[0].id } });
  assert.equal(result.ok, true, JSON.stringify(result.errors));
  const g = result.per_gpu;
  assert.ok(g.peak_allocated_bytes > 0);
  assert.ok(g.peak_allocated_bytes <= g.peak_reserved_bytes && g.peak_reserved_bytes <= g.device_total_bytes);
  assert.ok(Array.isArray(result.defaults_applied));
  assert.equal(typeof result.scenario, 'object');
});

test('bad input is an error object, never a trap', () => {
  const inputs = ['', '{', '{"model": ', 'null', '42', '"text"', '[]', '{}', '{"model": {"preset": 7}}',
    '{"model": {"preset": "no-such-model"}}', '{"model": {"preset": "llama3-8b"}, "training": {"batch_size": -4}}',
    '\u0000\uffff', '{"model": {"preset": "llama3-8b"}, "mode": ["training"]}'];
  for (const text of inputs) {
    const result = estimate(text);
    assert.equal(result.ok, false, `input ${JSON.stringify(text)}`);
    assert.ok(result.errors.length > 0 && typeof result.errors[0].message === 'string', `input ${JSON.stringify(text)}`);
  }
  const params = JSON.parse(gpumem.params('{"model_type": '));
  assert.equal(params.ok, false);
  // Still alive afterwards.
  const { models } = JSON.parse(gpumem.presets());
  assert.equal(estimate({ model: { preset: models[0].id } }).ok, true);
});

// What the page's headline reads (ui/panel_results.cpp): per_gpu.capacity_bytes is the memory that
// fits and utilization were judged against, a custom size when the scenario sets one, else the card's.
test('a custom card size is the capacity fits and utilization are judged against', () => {
  const model = { preset: 'meta-llama/Llama-3.1-8B' };
  const card = estimate({ version: 1, model, hardware: { gpu: 'H100-80GB' } });
  const custom = estimate({ version: 1, model, hardware: { gpu: 'H100-80GB', gpu_memory_gb: 800 } });
  assert.equal(card.per_gpu.capacity_bytes, 85520809984);   // the H100 80GB HBM3: 79.65 GiB
  assert.equal(custom.per_gpu.capacity_bytes, 800 * 2 ** 30);
  assert.equal(custom.per_gpu.device_total_bytes, card.per_gpu.device_total_bytes, 'the size changes no figure');
  for (const r of [card, custom]) {
    assert.equal(r.utilization, Math.round(r.per_gpu.device_total_bytes / r.per_gpu.capacity_bytes * 10000) / 10000);
    assert.equal(r.fits, r.per_gpu.device_total_bytes <= r.per_gpu.capacity_bytes);
  }
  assert.deepEqual([card.fits, custom.fits], [false, true]);
});
