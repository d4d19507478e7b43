// Native vs WebAssembly parity of the planner and the max-fit solvers: the CLI (`gpumem maxfit
// --json`, `gpumem plan --json`) and the module's maxfit() / plan() must give the same documents,
// timings aside (search.*_ms and evaluations_per_s measure the machine, not the answer).
//
//   GPUMEM_CLI=... GPUMEM_WASM=... node --test tests/parity/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..', '..');
const cli = path.resolve(repo, process.env.GPUMEM_CLI || 'build/native/core/cli/gpumem');
const wasm = path.resolve(repo, process.env.GPUMEM_WASM || 'build/wasm/wasm/gpumem.js');
for (const [what, file] of [['gpumem CLI', cli], ['WebAssembly module', wasm]]) {
  if (!fs.existsSync(file)) throw new Error(`${what} not found at ${file}: build it (./make.sh test) or set GPUMEM_CLI / GPUMEM_WASM`);
}
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gpumem-planner-parity-'));
process.on('exit', () => fs.rmSync(tmp, { recursive: true, force: true }));

const module = await createRequire(import.meta.url)(wasm)();

function native(command, doc) {
  const file = path.join(tmp, `${command}.json`);
  fs.writeFileSync(file, JSON.stringify(doc));
  const r = spawnSync(cli, [command, '--scenario', file, '--json'], { encoding: 'utf8', maxBuffer: 64 << 20 });
  return JSON.parse(r.stdout);
}
function withoutTimings(result) {
  if (result.search) for (const k of ['setup_ms', 'search_ms', 'elapsed_ms', 'evaluations_per_s']) delete result.search[k];
  return result;
}

const cases = [
  { model: { preset: 'meta-llama/Llama-3.1-8B' }, training: { seq_len: 4096 }, engine: { type: 'deepspeed', zero_stage: 3 },
    parallelism: { data_parallel_size: 4 } },
  { model: { preset: 'mistralai/Mixtral-8x7B-v0.1' }, mode: 'inference', inference: { engine: 'vllm', context_len: 16384 },
    parallelism: { tensor_parallel_size: 2 } },
  { model: { preset: 'Qwen/Qwen2.5-7B' }, training: { method: 'qlora', seq_len: 2048 } },
  { model: { preset: 'llama3-8b' }, training: { batch_size: 0 } },  // invalid: the same error document
];

// Each case's expected answer: the last one is invalid; equal error documents are no parity.
const expectOk = (doc) => !(doc.training && doc.training.batch_size === 0);

test('maxfit: native and WebAssembly agree', () => {
  for (const doc of cases) {
    const a = native('maxfit', doc), b = JSON.parse(module.maxfit(JSON.stringify(doc)));
    assert.equal(a.ok, expectOk(doc), `${JSON.stringify(doc)}: ${JSON.stringify(a.errors)}`);
    assert.deepEqual(b, a, JSON.stringify(doc));
  }
});

test('plan: native and WebAssembly agree, every row and its estimate', () => {
  const plans = [
    { ...cases[0], plan: { num_gpus: 16, gpu: 'H100-80GB', global_batch_size: 64, top: 5 } },
    { ...cases[1], plan: { num_gpus: 8, top: 4 } },
    { ...cases[2], plan: { num_gpus: 2, gpu: 'L40S-48GB', top: 3, step_time: { mfu: 0.3 } } },
    { model: { preset: 'llama3-8b' }, plan: { num_gpus: 8, top: 0 } },
  ];
  for (const doc of plans) {
    const a = withoutTimings(native('plan', doc)), b = withoutTimings(JSON.parse(module.plan(JSON.stringify(doc))));
    assert.equal(a.ok, doc.plan.top !== 0, `${JSON.stringify(doc)}: ${JSON.stringify(a.errors)}`);  // top 0 is refused
    assert.deepEqual(b, a, JSON.stringify(doc));
  }
});
