// `gpumem check`: the configs and launch commands people have, read as the job they run, with the
// verdict as the exit code (0 fits, 3 does not fit, 1 invalid input, 2 usage). Run as a user runs
// it: the CLI as a subprocess, files in a folder of their own.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const cli = process.env.GPUMEM_CLI || join(root, 'build/native/core/cli/gpumem');

function run(args, options = {}) {
  const r = spawnSync(cli, args, { encoding: 'utf8', env: { ...process.env, HF_HUB_OFFLINE: '1' }, ...options });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

function folder(files) {
  const dir = mkdtempSync(join(tmpdir(), 'gpumem-check-'));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

const qlora = `base_model: meta-llama/Llama-3.1-8B
adapter: qlora
load_in_4bit: true
lora_r: 16
lora_alpha: 32
lora_target_linear: true
sequence_len: 4096
sample_packing: true
micro_batch_size: 2
gradient_accumulation_steps: 4
bf16: auto
gradient_checkpointing: true
optimizer: paged_adamw_8bit
learning_rate: 0.0002
`;

test('an axolotl QLoRA config fits one 24 GB card: exit 0, the verdict line, what was read', () => {
  const dir = folder({ 'qlora.yml': qlora });
  try {
    const r = run(['check', join(dir, 'qlora.yml'), '--gpu', 'RTX 4090']);
    assert.equal(r.code, 0, r.err + r.out);
    assert.match(r.out, /^fits: [\d.]+ GiB of [\d.]+ GiB per GPU \(headroom [\d.]+ GiB\), meta-llama\/Llama-3\.1-8B on 1 x /);
    assert.match(r.out, /read as axolotl/);
    assert.match(r.out, /micro_batch_size 2/);
    assert.match(r.out, /assumed: .*bf16 is "auto"/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('--json: the estimate of the resolved scenario plus what was read, ignored and assumed', () => {
  const dir = folder({ 'qlora.yml': qlora });
  try {
    const r = run(['check', join(dir, 'qlora.yml'), '--gpu', 'RTX 4090', '--json']);
    assert.equal(r.code, 0, r.err);
    const j = JSON.parse(r.out);
    assert.equal(j.ok, true);
    assert.equal(j.fits, true);
    const t = j.scenario.training;
    assert.equal(t.method, 'qlora');
    assert.equal(t.quantization, 'nf4');
    assert.equal(t.batch_size, 2);
    assert.equal(t.gradient_accumulation_steps, 4);
    assert.equal(t.seq_len, 4096);
    assert.equal(t.lora.rank, 16);
    assert.equal(t.optimizer, 'paged_adamw_8bit');
    assert.equal(j.check.format, 'axolotl');
    assert.equal(j.check.read.lora_r, 16);
    assert.ok(j.check.ignored.includes('learning_rate'));
    assert.ok(j.per_gpu.device_total_bytes <= j.per_gpu.capacity_bytes);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the flags override the file; a job that does not fit exits 3', () => {
  const dir = folder({ 'qlora.yml': qlora.replace('adapter: qlora\nload_in_4bit: true\n', '') });
  try {
    const r = run(['check', join(dir, 'qlora.yml'), '--gpu', 'RTX 4090', '--seq-len', '8192', '--json']);
    assert.equal(r.code, 3, r.err);
    const j = JSON.parse(r.out);
    assert.equal(j.fits, false);
    assert.equal(j.scenario.training.seq_len, 8192);  // --seq-len over sequence_len 4096
    assert.equal(j.scenario.training.method, 'full');
    const text = run(['check', join(dir, 'qlora.yml'), '--gpu', 'RTX 4090']);
    assert.equal(text.code, 3);
    assert.match(text.out, /^does not fit: [\d.]+ GiB of [\d.]+ GiB per GPU \(over by [\d.]+ GiB\)/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a file the config names is found from the config\'s folder and its parents', () => {
  // axolotl's `deepspeed: deepspeed_configs/zero3.json` is named from the project's root.
  const dir = folder({
    'deepspeed_configs/zero3.json': JSON.stringify({
      zero_optimization: { stage: 3 }, bf16: { enabled: 'auto' }, train_micro_batch_size_per_gpu: 'auto',
    }),
    'examples/llama/full.yml': 'base_model: meta-llama/Llama-3.1-8B\nmicro_batch_size: 1\nsequence_len: 2048\n' +
      'bf16: true\ngradient_checkpointing: true\ndeepspeed: deepspeed_configs/zero3.json\n',
  });
  try {
    const r = run(['check', join(dir, 'examples/llama/full.yml'), '--num-gpus', '8', '--json']);
    assert.ok(r.code === 0 || r.code === 3, r.err);
    const j = JSON.parse(r.out);
    assert.equal(j.scenario.engine.type, 'deepspeed');
    assert.equal(j.scenario.engine.zero_stage, 3);
    assert.equal(j.scenario.training.precision, 'mixed_master_fp32');  // DeepSpeed's fp32 master copy
    assert.equal(j.scenario.hardware.num_gpus, 8);
    assert.deepEqual(j.check.files, [join(dir, 'examples/llama/full.yml'), 'deepspeed_configs/zero3.json']);
    // Not there: an error naming it (exit 1), never a silent default.
    rmSync(join(dir, 'deepspeed_configs'), { recursive: true });
    const missing = run(['check', join(dir, 'examples/llama/full.yml')]);
    assert.equal(missing.code, 1);
    assert.match(missing.err, /deepspeed_configs\/zero3\.json: is named by .* but was not found/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('check -- COMMAND, and a file holding one: VAR=value prefixes, continuations, the engine\'s flags', () => {
  const r = run(['check', '--json', '--', 'vllm', 'serve', 'meta-llama/Llama-3.1-8B-Instruct', '--max-model-len', '8192',
    '--gpu-memory-utilization', '0.85', '--tensor-parallel-size', '2']);
  assert.ok(r.code === 0 || r.code === 3, r.err);
  const j = JSON.parse(r.out);
  assert.equal(j.scenario.mode, 'inference');
  assert.equal(j.scenario.inference.engine, 'vllm');
  assert.equal(j.scenario.inference.context_len, 8192);
  assert.equal(j.scenario.inference.gpu_memory_utilization, 0.85);
  assert.equal(j.scenario.parallelism.tensor_parallel_size, 2);
  assert.equal(j.scenario.hardware.num_gpus, 2);
  const dir = folder({
    'serve.sh': '#!/bin/sh\n# start the server\nCUDA_VISIBLE_DEVICES=0,1 vllm serve meta-llama/Llama-3.1-8B-Instruct \\\n' +
      '  --max-model-len 8192 \\\n  --tensor-parallel-size 2 --port 8000\n',
  });
  try {
    const f = run(['check', join(dir, 'serve.sh'), '--json']);
    assert.ok(f.code === 0 || f.code === 3, f.err);
    const k = JSON.parse(f.out);
    assert.equal(k.check.format, 'vllm');
    assert.equal(k.scenario.inference.context_len, 8192);
    assert.ok(k.check.ignored.includes('port'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a torchrun launch: processes from --nproc-per-node x --nnodes, the script\'s HF Trainer flags', () => {
  const r = run(['check', '--json', '--', 'torchrun', '--nnodes', '2', '--nproc-per-node', '8', 'train.py',
    '--model_name_or_path', 'meta-llama/Llama-3.1-8B', '--per_device_train_batch_size', '4', '--bf16', 'True',
    '--fsdp', 'full_shard auto_wrap', '--gradient_checkpointing', 'True', '--learning_rate', '2e-5']);
  assert.ok(r.code === 0 || r.code === 3, r.err);
  const j = JSON.parse(r.out);
  assert.equal(j.scenario.hardware.num_gpus, 16);
  assert.equal(j.scenario.engine.type, 'fsdp');
  assert.equal(j.scenario.training.batch_size, 4);
  assert.equal(j.scenario.training.activation_checkpointing, 'full');
  assert.deepEqual(j.check.formats, ['torchrun', 'torchrun']);
  assert.ok(j.check.ignored.includes('learning_rate'));
});

test('bad input: exit 1 with the file or key named; usage: exit 2', () => {
  const dir = folder({
    'notes.txt': 'remember to buy milk\n',
    'bad.yml': 'base_model: meta-llama/Llama-3.1-8B\nmicro_batch_size: many\n',
    'ds.json': '{"zero_optimization": {"stage": 3}}',
  });
  try {
    let r = run(['check', join(dir, 'notes.txt')]);
    assert.equal(r.code, 1);
    assert.match(r.err, /is not a config or command gpumem reads/);
    r = run(['check', join(dir, 'bad.yml')]);
    assert.equal(r.code, 1);
    assert.match(r.err, /micro_batch_size: must be a whole number/);
    r = run(['check', join(dir, 'ds.json')]);  // a DeepSpeed JSON names no model
    assert.equal(r.code, 1);
    assert.match(r.err, /give --model/);
    r = run(['check', join(dir, 'ds.json'), '--model', 'meta-llama/Llama-3.1-8B', '--num-gpus', '8']);
    assert.ok(r.code === 0 || r.code === 3, r.err);
    r = run(['check', join(dir, 'absent.yml')]);
    assert.equal(r.code, 1);
    r = run(['check']);
    assert.equal(r.code, 2);
    r = run(['check', '--']);
    assert.equal(r.code, 2);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('what export writes, check reads back as the same job (CLI to CLI)', () => {
  const args = ['--model', 'meta-llama/Llama-3.1-8B', '--engine', 'fsdp', '--num-gpus', '8', '--batch-size', '2',
    '--seq-len', '4096', '--gradient-checkpointing'];
  for (const format of ['torchrun', 'axolotl', 'torchtune']) {
    const e = run(['export', format, ...args, '--json']);
    assert.equal(e.code, 0, e.err);
    const exported = JSON.parse(e.out);
    const dir = folder({ 'job.txt': exported.text });
    try {
      // axolotl starts one process per visible GPU: the file does not say how many.
      const r = run(['check', join(dir, 'job.txt'), '--num-gpus', '8', '--json']);
      assert.ok(r.code === 0 || r.code === 3, `${format}: ${r.err}`);
      const a = JSON.parse(r.out).per_gpu.device_total_bytes, b = exported.estimate.per_gpu.device_total_bytes;
      assert.ok(Math.abs(a - b) / b <= 0.005, `${format}: read back ${a} B, exported ${b} B\n${exported.text}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
});

test('CUDA_VISIBLE_DEVICES counts the processes of a launcher that starts one per visible GPU', () => {
  const dir = folder({ 'qlora.yml': qlora });
  try {
    const r = run(['check', '--json', '--', 'CUDA_VISIBLE_DEVICES=0,1,2,3', 'axolotl', 'train', join(dir, 'qlora.yml')]);
    assert.ok(r.code === 0 || r.code === 3, r.err);
    const j = JSON.parse(r.out);
    assert.equal(j.scenario.hardware.num_gpus, 4);
    assert.ok(j.check.assumptions.some((a) => a.startsWith('CUDA_VISIBLE_DEVICES=0,1,2,3: 4 GPU(s)')), j.check.assumptions);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
