// Native vs WebAssembly parity for the decision functions: fit, export, sweep (chart --json) and
// calibrate give the same documents from the `gpumem` CLI and from the module the page uses.
//
//   node --test tests/parity/
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..', '..');
const cli = path.resolve(repo, process.env.GPUMEM_CLI || 'build/native/core/cli/gpumem');
const wasm = path.resolve(repo, process.env.GPUMEM_WASM || 'build/wasm/wasm/gpumem.js');

let m;
before(async () => {
  m = await createRequire(import.meta.url)(wasm)();
});

const native = (args, input) => {
  const r = spawnSync(cli, [...args, '--json'], { input, encoding: 'utf8', maxBuffer: 64 << 20 });
  return JSON.parse(r.stdout);
};

const scenarios = [
  { model: 'meta-llama/Llama-3.1-8B' },
  { model: 'meta-llama/Llama-3.1-8B', training: { batch_size: 8 }, parallelism: { data_parallel_size: 8 },
    hardware: { num_gpus: 8 } },
  { model: 'Qwen/Qwen2.5-7B', mode: 'inference', inference: { context_len: 32768, batch_size: 16 } },
  { model: 'meta-llama/Llama-3.2-1B', training: { method: 'lora' } },
];

test('fit: the same suggestions, scenarios and estimates', () => {
  // The search's elapsed time measures the machine, not the answer.
  const answer = (r) => { if (r.search) delete r.search.elapsed_ms; return r; };
  for (const s of scenarios) {
    const text = JSON.stringify(s);
    const fromCli = answer(native(['fit', '--scenario', '-'], text));
    assert.equal(fromCli.ok, true, `${text}: ${JSON.stringify(fromCli.errors)}`);
    assert.deepEqual(answer(JSON.parse(m.fit(text))), fromCli, text);
  }
});

test('export: the same text, notes and estimate in every format', () => {
  const training = { model: 'meta-llama/Llama-3.1-8B', engine: { type: 'deepspeed', zero_stage: 2 },
    parallelism: { data_parallel_size: 4 }, hardware: { num_gpus: 4 } };
  const cases = [['deepspeed', training], ['accelerate', training], ['torchrun', training],
    ['torchtune', { model: 'meta-llama/Llama-3.1-8B', training: { method: 'lora' } }],
    ['axolotl', { model: 'meta-llama/Llama-3.1-8B', training: { method: 'qlora' } }],
    ['litgpt', { model: 'google/gemma-2b', training: { method: 'lora' } }],
    ['vllm', { model: 'meta-llama/Llama-3.1-8B', mode: 'inference' }],
    ['llama.cpp', { model: 'meta-llama/Llama-3.1-8B', mode: 'inference', inference: { weight_format: 'q4_k_m' } }]];
  for (const [format, s] of cases) {
    const fromWasm = JSON.parse(m.exportConfig(JSON.stringify({ format, scenario: s })));
    assert.ok(fromWasm.ok, `${format}: ${JSON.stringify(fromWasm.errors)}`);
    assert.deepEqual(fromWasm, native(['export', format, '--scenario', '-'], JSON.stringify(s)), format);
  }
});

test('sweep: the same points, boundary and capacity', () => {
  for (const [s, field] of [[scenarios[3], 'training.seq_len'], [scenarios[2], 'inference.batch_size']]) {
    const fromWasm = JSON.parse(m.sweep(JSON.stringify({ scenario: s, field })));
    assert.equal(fromWasm.ok, true, `${field}: ${JSON.stringify(fromWasm.errors)}`);
    assert.deepEqual(fromWasm, native(['chart', '--scenario', '-', '--x', field], JSON.stringify(s)), field);
    const svg = spawnSync(cli, ['chart', '--scenario', '-', '--x', field], { input: JSON.stringify(s), encoding: 'utf8' });
    assert.equal(m.sweepSvg(JSON.stringify(fromWasm)), svg.stdout, `${field}: the SVG`);
  }
});

test('calibrate: the same fitted overheads and report', () => {
  const records = spawnSync('node', [path.join(repo, 'tests/bench/records.mjs'), '--source', 'torchtitan'],
    { encoding: 'utf8', env: { ...process.env, GPUMEM_CLI: cli } }).stdout.trim().split('\n').map((l) => JSON.parse(l));
  const dir = mkdtempSync(path.join(tmpdir(), 'gpumem-parity-'));
  const file = path.join(dir, 'titan.jsonl');
  writeFileSync(file, records.map((r) => JSON.stringify(r)).join('\n') + '\n');
  assert.ok(records.length >= 5, `${records.length} torchtitan records`);
  const fromWasm = JSON.parse(m.calibrate(JSON.stringify({ records, name: 'titan' })));
  assert.equal(fromWasm.ok, true, JSON.stringify(fromWasm.errors));
  assert.deepEqual(fromWasm, native(['calibrate', file]));
});
