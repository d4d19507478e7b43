// Quantized checkpoints as a user asks for them: `gpumem params` and `gpumem estimate` answer every
// bundled quantized preset from its own quantization_config (no Hub access: HF_HUB_OFFLINE).
//
//   GPUMEM_CLI=build/native/core/cli/gpumem node --test tests/cli/quantized.test.mjs
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..', '..');
const cli = path.resolve(repo, process.env.GPUMEM_CLI || 'build/native/core/cli/gpumem');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gpumem-quantized-test-'));
const env = { ...process.env, HF_HUB_OFFLINE: '1', HF_HOME: path.join(tmp, 'hf-home') };

function run(args) {
  const r = spawnSync(cli, args, { encoding: 'utf8', timeout: 60_000, maxBuffer: 64 << 20, env });
  assert.equal(r.status, 0, `gpumem ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

const dir = path.join(repo, 'presets', 'models');
const quantized = fs
  .readdirSync(dir)
  .filter((f) => f.endsWith('.json'))
  .map((f) => JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')))
  .filter((r) => r.config.quantization_config || r.config.text_config?.quantization_config);

// The weight format `auto` resolves to, by quantization_config.
function expectedFormat(q) {
  if (q.quant_method === 'fp8' || q.quant_method === 'mxfp4') return q.quant_method;
  if (q.quant_method === 'modelopt') return q.quant_algo === 'NVFP4' ? 'nvfp4' : 'fp8';
  if (q.quant_method === 'awq' || q.quant_method === 'gptq') return q.bits === 8 ? 'int8' : 'int4';
  const w = Object.values(q.config_groups)[0].weights;
  return w.num_bits === 8 ? (w.type === 'float' ? 'fp8' : 'int8') : 'int4';
}

test('at least 14 quantized checkpoints are bundled', () => {
  assert.ok(quantized.length >= 14, `${quantized.length} quantized presets`);
});

for (const record of quantized) {
  const id = record.model_id;
  test(`${id}: params counts the logical total and the checkpoint's bytes`, () => {
    const p = run(['params', '--model', id, '--json']);
    assert.equal(p.total, record.total_params);
    assert.equal(typeof p.checkpoint_bytes, 'number');
    // Fewer bytes than bf16 weights; exact unless the checkpoint holds layers the count leaves out (MTP).
    assert.ok(p.checkpoint_bytes < 2 * p.total, `${p.checkpoint_bytes} B for ${p.total} params`);
    assert.equal(p.checkpoint_bytes_exact, p.mtp === 0);
    if (record.checkpoint?.bytes) {
      const off = Math.abs(p.checkpoint_bytes / record.checkpoint.bytes - 1);
      assert.ok(off < 0.005, `${p.checkpoint_bytes} B derived, ${record.checkpoint.bytes} B on the Hub`);
    }
  });

  test(`${id}: estimate serves it in its own format under vLLM`, () => {
    const r = run(['estimate', '--model', id, '--mode', 'inference', '--inference-engine', 'vllm', '--json']);
    assert.equal(r.ok, true);
    const q = record.config.quantization_config;
    const applied = r.defaults_applied.find((d) => d.startsWith('inference.weight_format'));
    assert.ok(applied, 'the weight format is resolved from the checkpoint');
    assert.match(applied, new RegExp(`"${expectedFormat(q)}" \\(quantization_config`));
    assert.ok(!r.warnings.some((w) => /not modelled/.test(w)), r.warnings.join('; '));
  });
}

test('an 8B FP8-dynamic checkpoint weighs its stored bytes, not the bf16 ones', () => {
  // 6,979,321,856 e4m3 weights + 1,376,256 bf16 channel scales + 1,050,939,392 bf16 others.
  const fp8 = run(['params', '--model', 'RedHatAI/Meta-Llama-3.1-8B-Instruct-FP8-dynamic', '--json']);
  assert.equal(fp8.checkpoint_bytes, 6979321856 + 1376256 * 2 + 1050939392 * 2);
  const bf16 = run(['params', '--model', 'meta-llama/Llama-3.1-8B', '--json']);
  assert.equal(bf16.checkpoint_bytes, 8030261248 * 2);
});

test('transformers holds a GPTQ checkpoint as stored; vLLM drops what Marlin does not use', () => {
  const id = 'Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4';
  const stored = run(['params', '--model', id, '--json']).checkpoint_bytes;
  const weights = (engine) =>
    run(['estimate', '--model', id, '--mode', 'inference', '--inference-engine', engine, '--json']).per_gpu.components.weights;
  assert.equal(weights('transformers'), stored);
  // Qwen2.5-7B's Linears per layer: q 3584x3584, k/v 512x3584, o 3584x3584, gate/up 18944x3584,
  // down 3584x18944: symmetric qzeros are n / 256 bytes and g_idx 4 B per input
  // column (3584 x 6 + 18944 = 40,448 a layer), x 28 layers.
  const n = 28 * (3584 * 3584 * 2 + 512 * 3584 * 2 + 18944 * 3584 * 3);
  assert.equal(stored - weights('vllm'), n / 256 + 28 * 40448 * 4);
  // AWQ goes through awq_marlin at the same size.
  const awq = 'Qwen/Qwen3-8B-AWQ';
  const awqStored = run(['params', '--model', awq, '--json']).checkpoint_bytes;
  const awqVllm = run(['estimate', '--model', awq, '--mode', 'inference', '--inference-engine', 'vllm', '--json']);
  assert.equal(awqVllm.per_gpu.components.weights, awqStored);
});

test('params prints the checkpoint bytes with the quantization it follows', () => {
  const r = spawnSync(cli, ['params', '--model', 'RedHatAI/Meta-Llama-3.1-8B-Instruct-FP8-dynamic'], { encoding: 'utf8', env });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /checkpoint bytes: 9,083,953,152 \(compressed-tensors float-quantized\)/);
  const plain = spawnSync(cli, ['params', '--model', 'meta-llama/Llama-3.1-8B'], { encoding: 'utf8', env });
  assert.match(plain.stdout, /checkpoint bytes: 16,060,522,496 \(bf16\)/);
});

// vLLM's own start-up log, "Model loading took N GiB" (llm-d/llm-d-benchmark
// config_explorer/empirical-vllm-memory-results.md @0fa12aa9, vLLM 0.11.0 on H100): the weights a
// quantized or multimodal checkpoint holds once loaded, per GPU (gpt-oss: the rows' measured figures).
test('weights under vLLM match its logged model-loading figures', () => {
  const GiB = 1024 ** 3;
  const cases = [
    { model: 'RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic', tp: 1, logged: 67.72 },
    { model: 'RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic', tp: 2, logged: 33.88 },
    { model: 'mistralai/Mistral-Small-3.2-24B-Instruct-2506', tp: 1, logged: 44.76 },
    // mxfp4 experts through the Triton backend: the swizzled scales join the loaded ones.
    { model: 'openai/gpt-oss-20b', tp: 1, logged: 13.47 },
    { model: 'openai/gpt-oss-120b', tp: 1, logged: 64.38 },
  ];
  for (const c of cases) {
    const r = run(['estimate', '--model', c.model, '--mode', 'inference', '--inference-engine', 'vllm',
      '--tp', String(c.tp), '--num-gpus', String(c.tp), '--context-len', '16000', '--json']);
    const weights = r.per_gpu.components.weights / GiB;
    const off = Math.abs(weights / c.logged - 1);
    assert.ok(off < 0.005, `${c.model} TP ${c.tp}: ${weights.toFixed(2)} GiB, vLLM logged ${c.logged} GiB`);
  }
});
