// The command lines of vram_calculator.py's README, run as written with `gpumem table` in place of
// `python3 vram_calculator.py`, against the mock Hub: microsoft/DialoGPT-medium is no bundled preset,
// so its config.json comes from the Hub as a user's would.
//
//   node --test tests/compat/dtype_table.test.mjs
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { startCompat } from './harness.mjs';

let compat;
before(async () => { compat = await startCompat(); });
after(async () => { await compat?.close(); });

const run = (args) => compat.run(['table', ...args]);
const table = async (args) => {
  const r = await run([...args, '--json']);
  assert.equal(r.code, 0, `${args.join(' ')}: ${r.all}`);
  return JSON.parse(r.stdout);
};

// microsoft/DialoGPT-medium is GPT-2 medium: vocab 50257, 1024 positions, hidden 1024, 24 layers, head tied.
//   wte 50257 x 1024 = 51,463,168; wpe 1024 x 1024 = 1,048,576;
//   per layer: c_attn 1024 x 3072 + 3072, c_proj 1024^2 + 1024, c_fc 1024 x 4096 + 4096,
//   mlp c_proj 4096 x 1024 + 1024, two LayerNorms 4 x 1024 -> 12,596,224 x 24 = 302,309,376; ln_f 2,048
//   total 354,823,168. (The README prints 404,966,400: its own estimate, not an exact count.)
const DIALOGPT = 354823168;
const EIGHT = ['fp32', 'fp16', 'bf16', 'fp8', 'int8', 'int4', 'mxfp4', 'nvfp4'];

describe('Usage', () => {
  test('table microsoft/DialoGPT-medium: the eight dtypes, inference, training (Adam) and LoRA', async () => {
    const r = await run(['microsoft/DialoGPT-medium']);
    assert.equal(r.code, 0, r.all);
    assert.match(r.stderr, /microsoft\/DialoGPT-medium \(main\): config\.json from the Hub/);
    assert.match(r.stdout, /Model: microsoft\/DialoGPT-medium\nArchitecture: gpt2\nParameters: 354,823,168\n/);
    for (const d of EIGHT) assert.match(r.stdout, new RegExp(`\\n${d.toUpperCase()}\\s+\\d+\\.\\d\\d\\s+\\d+\\.\\d\\d`));
    const t = await table(['microsoft/DialoGPT-medium']);
    assert.equal(t.parameters, DIALOGPT);
    assert.deepEqual(t.rows.map((row) => row.dtype), EIGHT);
    const by = Object.fromEntries(t.rows.map((row) => [row.dtype, row]));
    // Plain floats store every tensor in the dtype: 354,823,168 x 4 B and x 2 B.
    assert.equal(by.fp32.weights_bytes, DIALOGPT * 4);
    assert.equal(by.bf16.weights_bytes, DIALOGPT * 2);
    assert.equal(by.fp16.inference_bytes, by.bf16.inference_bytes);
    // Fewer bits, less memory; the 4-bit formats carry their scales (mxfp4: 1 B per 32, nvfp4: 1 B per 16).
    assert.ok(by.int8.weights_bytes < by.bf16.weights_bytes && by.int4.weights_bytes < by.int8.weights_bytes);
    assert.ok(by.mxfp4.weights_bytes < by.nvfp4.weights_bytes);
    // Full training with Adam in fp32: weights + gradients + two moments = 16 B per parameter at least.
    assert.ok(by.fp32.training_bytes > DIALOGPT * 16);
    // Only float dtypes train; LoRA runs over float, int8 and int4 (QLoRA) bases.
    assert.deepEqual(t.rows.filter((row) => row.training_bytes !== null).map((row) => row.dtype), ['fp32', 'fp16', 'bf16', 'fp8']);
    assert.deepEqual(t.rows.filter((row) => row.lora_bytes !== null).map((row) => row.dtype), ['fp32', 'fp16', 'bf16', 'int8', 'int4']);
  });

  test('table meta-llama/Llama-2-7b-hf --dtype bf16: one row', async () => {
    const t = await table(['meta-llama/Llama-2-7b-hf', '--dtype', 'bf16']);
    assert.deepEqual(t.rows.map((row) => row.dtype), ['bf16']);
    // 6,738,415,616 parameters x 2 B = 13,476,831,232 B.
    assert.equal(t.parameters, 6738415616);
    assert.equal(t.rows[0].weights_bytes, 6738415616 * 2);
    const upper = await table(['meta-llama/Llama-2-7b-hf', '--dtype', 'BF16']);
    assert.deepEqual(upper.rows, t.rows);
    const bad = await run(['meta-llama/Llama-2-7b-hf', '--dtype', 'int3']);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /weight_format: must be one of .*got "int3"/);
  });

  test('table mistralai/Mistral-7B-v0.1 --batch-size 4 --sequence-length 4096', async () => {
    const big = await table(['mistralai/Mistral-7B-v0.1', '--batch-size', '4', '--sequence-length', '4096']);
    const small = await table(['mistralai/Mistral-7B-v0.1']);
    assert.deepEqual(big.settings, { batch_size: 4, sequence_length: 4096, lora_rank: 64 });
    const kv = (t) => t.rows.find((row) => row.dtype === 'bf16').inference_bytes;
    // The KV cache grows 4 x 2 = 8-fold: 32 layers x 8 kv heads x 128 x 2 (K, V) x 2 B = 128 KiB a token,
    // 2048 tokens = 256 MiB, 4 x 4096 = 2 GiB: at least 1.75 GiB more.
    assert.ok(kv(big) - kv(small) > 1.75 * 2 ** 30, `${kv(big)} vs ${kv(small)}`);
    assert.equal(big.rows[0].weights_bytes, small.rows[0].weights_bytes);
  });

  test('table --show-detailed microsoft/DialoGPT-medium: layouts, GPUs and the minimum memory', async () => {
    const r = await run(['--show-detailed', 'microsoft/DialoGPT-medium']);
    assert.equal(r.code, 0, r.all);
    for (const heading of ['Parallelization Strategies (BF16 Inference):', 'Recommendations (BF16, one GPU):',
      'Minimum GPU Requirements (BF16):', 'Single GPU Inference: ', 'Single GPU Training: ', 'Single GPU LoRA: '])
      assert.ok(r.stdout.includes(heading), heading);
    const t = await table(['--show-detailed', 'microsoft/DialoGPT-medium']);
    const layouts = t.strategies.map((s) => `${s.strategy} ${s.tp}x${s.pp}x${s.ep}x${s.dp}`);
    assert.deepEqual(layouts, ['Single GPU 1x1x1x1', 'Tensor Parallel 2x1x1x1', 'Tensor Parallel 4x1x1x1',
      'Tensor Parallel 8x1x1x1', 'Pipeline Parallel 1x2x1x1', 'Pipeline Parallel 1x4x1x1', 'Pipeline Parallel 1x8x1x1',
      'TP + PP 2x2x1x1', 'TP + PP 2x4x1x1', 'TP + PP 4x2x1x1', 'TP + PP 4x4x1x1']);
    // Splitting the model lowers each GPU's share.
    assert.ok(t.strategies[1].bytes_per_gpu < t.strategies[0].bytes_per_gpu);
    assert.equal(t.minimum.inference_bytes, t.strategies[0].bytes_per_gpu);
    assert.deepEqual(t.gpus.map((g) => g.id), ['RTX-4090-24GB', 'A100-40GB', 'A100-80GB', 'H100-80GB', 'H200-141GB', 'B200-192GB']);
    for (const g of t.gpus) assert.equal(g.inference, t.minimum.inference_bytes <= g.memory_bytes, g.id);
  });

  test('table --lora-rank 128 --show-detailed microsoft/DialoGPT-medium: a larger rank, more LoRA memory', async () => {
    const r128 = await table(['--lora-rank', '128', '--show-detailed', 'microsoft/DialoGPT-medium']);
    const r64 = await table(['--show-detailed', 'microsoft/DialoGPT-medium']);
    assert.equal(r128.settings.lora_rank, 128);
    const lora = (t) => t.rows.find((row) => row.dtype === 'bf16').lora_bytes;
    assert.ok(lora(r128) > lora(r64));
    assert.ok(r128.minimum.lora_bytes > r64.minimum.lora_bytes);
  });

  test('table --list-types: the dtypes and the GPUs, no model needed', async () => {
    const r = await run(['--list-types']);
    assert.equal(r.code, 0, r.all);
    for (const d of EIGHT) assert.match(r.stdout, new RegExp(`\\n  ${d}\\s+\\d\\.\\d{4}`));
    for (const g of ['RTX-4090-24GB', 'A100-40GB', 'A100-80GB', 'H100-80GB']) assert.ok(r.stdout.includes(g), g);
  });
});

describe('Configuration System', () => {
  test('table --config-dir ./my_config microsoft/DialoGPT-medium: the README\'s own dtype and GPU', async () => {
    // The README's examples, as written: data_types.json's "your_custom_format" (0.75 bytes a
    // parameter) and gpu_types.json's RTX 5090.
    const dir = path.join(compat.tmp, 'my_config');
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'data_types.json'), JSON.stringify({
      your_custom_format: { bytes_per_param: 0.75, description: 'Your custom 6-bit format' },
    }));
    fs.writeFileSync(path.join(dir, 'gpu_types.json'), JSON.stringify({
      name: 'RTX 5090', memory_gb: 32, category: 'consumer', architecture: 'Blackwell',
    }));
    const r = await compat.run(['table', '--config-dir', dir, 'microsoft/DialoGPT-medium', '--show-detailed', '--json']);
    assert.equal(r.code, 0, r.all);
    assert.match(r.stderr, /data_types\.json: 1 dtype\(s\) added/);
    const t = JSON.parse(r.stdout);
    const custom = t.rows.find((row) => row.dtype === 'your_custom_format');
    // 354,823,168 x 0.75 B = 266,117,376 B; inference only (no training in a 6-bit format).
    assert.equal(custom.weights_bytes, DIALOGPT * 0.75);
    assert.equal(custom.training_bytes, null);
    // The GPU joins the recommendations: 32 GB read as the catalogue reads memory_gb, x 1024 MiB.
    const gpu = t.gpus.find((g) => g.name === 'RTX 5090');
    assert.equal(gpu.memory_bytes, 32 * 2 ** 30);
    const listed = await compat.run(['table', '--list-types', '--config-dir', dir]);
    assert.match(listed.stdout, /your_custom_format\s+0\.7500\s+Your custom 6-bit format \(--config-dir\)/);
    assert.match(listed.stdout, /RTX-5090\s+32\s+RTX 5090 \(--config-dir\)/);
    // A file's text reaches the terminal on one line: a line break and an escape sequence in a
    // description or a card name are shown as text, never as a second line or a colour.
    fs.writeFileSync(path.join(dir, 'data_types.json'), JSON.stringify({
      forged: { bytes_per_param: 1, description: 'six bits\nNOTICE: verified\u001b[32m' },
    }));
    fs.writeFileSync(path.join(dir, 'gpu_types.json'), JSON.stringify({ name: 'Card\u202e\nNOTICE: fits', memory_gb: 8 }));
    const forged = await compat.run(['table', '--list-types', '--config-dir', dir]);
    assert.equal(forged.code, 0, forged.all);
    assert.ok(!/[\u0000-\u0009\u000b-\u001f\u007f\u202e]/.test(forged.stdout), JSON.stringify(forged.stdout));
    assert.ok(!/^\s*NOTICE/m.test(forged.stdout), forged.stdout);
    assert.match(forged.stdout, /six bits\\nNOTICE: verified\\x1b\[32m/);
    assert.match(forged.stdout, /Card\\u202e\\nNOTICE: fits/);
    fs.writeFileSync(path.join(dir, 'data_types.json'), JSON.stringify({
      your_custom_format: { bytes_per_param: 0.75, description: 'Your custom 6-bit format' },
    }));
    // A broken file is named.
    fs.writeFileSync(path.join(dir, 'gpu_types.json'), '{"name": "X"}');
    const bad = await compat.run(['table', '--config-dir', dir, 'microsoft/DialoGPT-medium']);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /gpu_types\.json: each GPU needs a "name" and a positive "memory_gb"/);
  });
});
