// gpu-mem-calculator's JSON config files, read as that project ships them: each runs through the
// `gpumem` CLI as a subprocess (`gpumem estimate --scenario FILE --json`, and `--config FILE` where
// the CLI has that flag), and the figures it must print are derived in the comments.
//
//   GPUMEM_CLI=path/to/gpumem node --test tests/compat/     (default build/native/core/cli/gpumem)
//
// data/ holds the three files gpu-mem-calculator (github.com/George614/gpu-mem-calculator, MIT)
// ships in configs/, byte for byte; README's example is the deepspeed one without
// largest_layer_params and zero_init. The other shapes its format
// allows (every checkpointing level, each engine and FSDP sharding name, "350M" and "1.5T" sizes,
// a num_gpus larger than the layout) are those files with one field changed.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..', '..');
const cli = path.resolve(repo, process.env.GPUMEM_CLI || 'build/native/core/cli/gpumem');
const data = (name) => path.join(here, 'data', name);

if (!fs.existsSync(cli)) throw new Error(`gpumem CLI not found at ${cli}: build it or set GPUMEM_CLI`);

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gpumem-config-files-'));
process.on('exit', () => fs.rmSync(tmp, { recursive: true, force: true }));

function run(args) {
  const r = spawnSync(cli, args, { encoding: 'utf8', timeout: 60_000, maxBuffer: 64 << 20 });
  if (r.error) throw r.error;
  return r;
}

// `estimate --config` is gpu-mem-calculator's spelling; where this CLI has it, it must print the same.
const hasConfigFlag = run(['estimate', '--help']).stdout.includes('--config');

// The result of `gpumem estimate --scenario FILE --json`, with its exit code.
function estimate(file) {
  const r = run(['estimate', '--scenario', file, '--json']);
  assert.equal(r.signal, null, `${file}: killed by ${r.signal}`);
  if (hasConfigFlag) {
    const c = run(['estimate', '--config', file, '--json']);
    assert.equal(c.stdout, r.stdout, `${file}: --config prints what --scenario prints`);
    assert.equal(c.status, r.status);
  }
  let result;
  try {
    result = JSON.parse(r.stdout);
  } catch (e) {
    assert.fail(`${file}: stdout is not JSON (${e.message}):\n${r.stdout}\n${r.stderr}`);
  }
  return { code: r.status, result };
}

function ok(file) {
  const { code, result } = estimate(file);
  assert.equal(code, 0, `${file}: exit ${code}\n${JSON.stringify(result.errors ?? result, null, 2)}`);
  assert.equal(result.ok, true);
  return result;
}

const shipped = (name) => JSON.parse(fs.readFileSync(data(name), 'utf8'));

// One of the shipped files with `change` applied to a copy, written under tmp.
let written = 0;
function variant(name, change) {
  const doc = shipped(name);
  change(doc);
  const file = path.join(tmp, `${++written}-${name}`);
  fs.writeFileSync(file, JSON.stringify(doc, null, 2));
  return file;
}

const has = (list, text) => list.some((line) => line.includes(text));

describe("gpu-mem-calculator's shipped config files", () => {
  test('llama2_7b_deepspeed.json: ZeRO-3 over 8 GPUs, optimizer on the CPU, level 1', () => {
    const r = ok(data('llama2_7b_deepspeed.json'));
    const s = r.scenario;
    // "7B" is the declared size; the weights use it.
    assert.equal(r.parameters.total, 7_000_000_000);
    assert.equal(r.parameters.exact, false);
    // The shape given (32 layers, h 4096, 32 heads, vocab 32000) is counted; intermediate_size is
    // not in the file, so Llama's 8h/3 = 10922.7 rounded up to 256 gives 11008.
    const p = r.parameters.per_component;
    assert.equal(p.embedding, 32000 * 4096); // 131,072,000
    assert.equal(p.lm_head, 32000 * 4096); // untied
    assert.equal(p.attention, 32 * 4 * 4096 * 4096); // q, k, v, o: 2,147,483,648
    assert.equal(p.mlp, 32 * 3 * 4096 * 11008); // gate, up, down: 4,328,521,728
    assert.equal(p.norms, (2 * 32 + 1) * 4096); // 266,240
    // 131,072,000 x 2 + 2,147,483,648 + 4,328,521,728 + 266,240 = 6,738,415,616: named in the warning,
    // which says what was guessed and no longer "a guessed Llama-like shape" for the whole model.
    assert.ok(has(r.warnings, 'the shape counts 6738415616'), r.warnings.join('\n'));
    assert.ok(has(r.warnings, 'guessed Llama-like intermediate_size'), r.warnings.join('\n'));
    assert.ok(!has(r.warnings, 'known only by its declared size'), r.warnings.join('\n'));
    assert.ok(has(r.defaults_applied, 'model.intermediate_size = 11008'));
    // Its format has no training sequence length: the step runs at model.max_seq_len.
    assert.equal(s.training.seq_len, 4096);
    assert.ok(has(r.defaults_applied, 'training.seq_len = 4096 (model.max_seq_len'));
    // Level 1, "checkpoint attention output": our selective, recorded with its meaning.
    assert.equal(s.training.activation_checkpointing, 'selective');
    assert.ok(has(r.defaults_applied, "gpu-mem-calculator's level 1: checkpoint attention output"));
    assert.equal(s.training.batch_size, 4);
    assert.equal(s.training.gradient_accumulation_steps, 4);
    assert.deepEqual([s.parallelism.data_parallel_size, s.parallelism.tensor_parallel_size], [8, 1]);
    assert.deepEqual([s.engine.type, s.engine.zero_stage, s.engine.offload_optimizer], ['deepspeed', 3, 'cpu']);
    assert.equal(s.hardware.num_gpus, 8);
    // 80 "GB" as a card size: 80 GiB.
    assert.equal(r.per_gpu.capacity_bytes, 80 * 2 ** 30);
    // ZeRO-3 over 8 ranks: bf16 weights and gradients 7e9 x 2 B / 8 = 1.75e9 B each; the fp32
    // master and moments live on the host.
    const c = r.per_gpu.components;
    assert.equal(c.weights, 1_750_000_000);
    assert.equal(c.gradients, 1_750_000_000);
    assert.equal(c.optimizer_states, 0);
    // Host: at least the fp32 master + m + v, 7e9 x 12 B / 8 ranks.
    assert.ok(r.host_bytes >= (7e9 * 12) / 8, `host_bytes ${r.host_bytes}`);
  });

  test('gpt3_175b_megatron.json: megatron_lm, zero_stage null, level 2, num_gpus the cluster', () => {
    const r = ok(data('gpt3_175b_megatron.json'));
    const s = r.scenario;
    assert.equal(s.engine.type, 'megatron'); // "megatron_lm"
    assert.equal(s.engine.zero_stage, 0); // null: absent
    // tp 8 x pp 16 = 128 GPUs a replica; num_gpus 1024 is the cluster, so dp = 1024 / 128 = 8
    // (the file's data_parallel_size 1 would make 128 GPUs).
    assert.equal(s.parallelism.tensor_parallel_size, 8);
    assert.equal(s.parallelism.pipeline_parallel_size, 16);
    assert.equal(s.parallelism.data_parallel_size, 8);
    assert.equal(s.parallelism.sequence_parallel, true);
    assert.equal(s.hardware.num_gpus, 1024);
    const derived = 'parallelism.data_parallel_size = 8 (num_gpus 1024';
    assert.ok(has(r.defaults_applied, derived), r.defaults_applied.join('\n'));
    // Level 2, "checkpoint attention input": selective.
    assert.equal(s.training.activation_checkpointing, 'selective');
    assert.ok(has(r.defaults_applied, "gpu-mem-calculator's level 2: checkpoint attention input"));
    assert.equal(s.training.seq_len, 2048); // max_seq_len
    assert.equal(r.parameters.total, 175_000_000_000); // "175B"
    // Shape: embedding and untied head 2 x 50257 x 12288 = 1,235,116,032; per layer 4 x 12288^2 +
    // 3 x 12288 x 32768 (I = 8h/3 = 32768, guessed) + 2 x 12288 = 1,811,963,904, x 96 =
    // 173,948,534,784; + final norm 12,288 = 175,183,663,104.
    assert.ok(has(r.warnings, 'the shape counts 175183663104'), r.warnings.join('\n'));
  });

  test('pytorch_ddp_example.json: pytorch_ddp on 4 GPUs, level 0', () => {
    const r = ok(data('pytorch_ddp_example.json'));
    const s = r.scenario;
    assert.equal(s.engine.type, 'ddp'); // "pytorch_ddp"
    assert.equal(s.parallelism.data_parallel_size, 4);
    assert.equal(s.training.activation_checkpointing, 'none'); // level 0
    assert.equal(s.training.seq_len, 2048);
    assert.equal(r.parameters.total, 1_000_000_000); // "1B"
    // DDP with bf16 autocast on fp32 weights: weights and gradients 1e9 x 4 B, AdamW's two fp32
    // moments 1e9 x 8 B, all on every GPU.
    const c = r.per_gpu.components;
    assert.equal(c.weights, 4e9);
    assert.equal(c.gradients, 4e9);
    assert.equal(c.optimizer_states, 8e9);
    // Shape: 2 x 32000 x 2048 = 131,072,000; per layer 4 x 2048^2 + 3 x 2048 x 5632 (8h/3 rounded up
    // to 256) + 2 x 2048 = 51,384,320, x 24 = 1,233,223,680; + 2048 = 1,364,297,728.
    assert.ok(has(r.warnings, 'the shape counts 1364297728'), r.warnings.join('\n'));
  });

  test("README's example (no largest_layer_params, no zero_init) gives the shipped file's figures", () => {
    const readme = variant('llama2_7b_deepspeed.json', (d) => {
      delete d.model.largest_layer_params;
      delete d.engine.zero_init;
    });
    assert.deepEqual(ok(readme).per_gpu, ok(data('llama2_7b_deepspeed.json')).per_gpu);
  });
});

describe("gpu-mem-calculator's format, field by field", () => {
  test('activation_checkpointing levels 0-4: none, selective, selective, full, full', () => {
    const withLevel = (level) =>
      variant('llama2_7b_deepspeed.json', (d) => (d.training.activation_checkpointing = level));
    const at = (level) => ok(withLevel(level));
    const [l0, l1, l2, l3, l4] = [0, 1, 2, 3, 4].map(at);
    const mode = (r) => r.scenario.training.activation_checkpointing;
    assert.deepEqual([l0, l1, l2, l3, l4].map(mode), ['none', 'selective', 'selective', 'full', 'full']);
    const act = (r) => r.per_gpu.components.activations;
    // Full: each of the 32 layers keeps its input, batch 4 x 4096 tokens x 4096 x 2 B (bf16) =
    // 134,217,728 B a layer: 4,294,967,296 (4 GiB).
    assert.equal(act(l3), 32 * 4 * 4096 * 4096 * 2);
    assert.equal(act(l4), act(l3));
    // Selective keeps less than none and more than full.
    assert.equal(act(l1), act(l2));
    assert.ok(act(l0) > act(l1) && act(l1) > act(l3), `${act(l0)} > ${act(l1)} > ${act(l3)}`);
    // true / false stay full / none.
    const yes = at(true);
    assert.equal(mode(yes), 'full');
    for (const bad of [5, 2.5, -1]) {
      const { code, result } = estimate(withLevel(bad));
      assert.equal(code, 1, `level ${bad}`);
      assert.equal(result.errors[0].field, 'training.activation_checkpointing');
      assert.match(result.errors[0].problem, /level from 0 to 4/);
    }
  });

  test('engine names: pytorch_ddp, pytorch, megatron_lm, megatron-lm, megatron_deepspeed', () => {
    const engine = (name, file, extra = {}) =>
      ok(variant(file, (d) => (d.engine = { ...d.engine, type: name, ...extra }))).scenario.engine;
    assert.equal(engine('pytorch', 'pytorch_ddp_example.json').type, 'ddp');
    assert.equal(engine('megatron-lm', 'gpt3_175b_megatron.json').type, 'megatron');
    const md = engine('megatron_deepspeed', 'gpt3_175b_megatron.json', { zero_stage: 1 });
    assert.deepEqual([md.type, md.zero_stage], ['megatron_deepspeed', 1]);
  });

  test('FSDP sharding_strategy: full_shard, shard_grad_op, no_shard over 4 GPUs', () => {
    const fsdp = (strategy) =>
      ok(variant('pytorch_ddp_example.json', (d) => (d.engine = { type: 'fsdp', sharding_strategy: strategy })));
    // fp32 weights and gradients 4e9 B, AdamW's moments 8e9 B; sharded parts / 4 ranks.
    const parts = (r) => {
      const c = r.per_gpu.components;
      return [r.scenario.engine.fsdp_sharding, c.weights, c.gradients, c.optimizer_states];
    };
    assert.deepEqual(parts(fsdp('full_shard')), ['full_shard', 1e9, 1e9, 2e9]);
    assert.deepEqual(parts(fsdp('shard_grad_op')), ['shard_grad_op', 4e9, 1e9, 2e9]);
    assert.deepEqual(parts(fsdp('no_shard')), ['no_shard', 4e9, 4e9, 8e9]);
    assert.equal(parts(fsdp('FULL_SHARD'))[0], 'full_shard'); // PyTorch's enum spelling
    const { code, result } = estimate(
      variant('pytorch_ddp_example.json', (d) => (d.engine = { type: 'fsdp', sharding_strategy: 'half_shard' })),
    );
    assert.equal(code, 1);
    assert.equal(result.errors[0].field, 'engine.sharding_strategy');
  });

  test('num_parameters as "350M", "1.5T", or left out (counted from the shape)', () => {
    // Only a size: the shape is a guess, and the warning says so.
    const sizeOnly = { name: 'custom-350m', num_parameters: '350M' };
    const small = ok(variant('pytorch_ddp_example.json', (d) => (d.model = sizeOnly)));
    assert.equal(small.parameters.total, 350_000_000);
    assert.ok(has(small.warnings, 'a guessed Llama-like shape'), small.warnings.join('\n'));
    const huge = ok(variant('gpt3_175b_megatron.json', (d) => (d.model.num_parameters = '1.5T')));
    assert.equal(huge.parameters.total, 1_500_000_000_000);
    // No declared size: the shape's own count (1,364,297,728 above), exact, with no declared-size warning.
    const counted = ok(variant('pytorch_ddp_example.json', (d) => delete d.model.num_parameters));
    assert.equal(counted.parameters.total, 1_364_297_728);
    assert.equal(counted.parameters.exact, true);
    assert.ok(!has(counted.warnings, 'num_parameters'), counted.warnings.join('\n'));
  });

  test("its web page's Save as JSON (MoE off, nulls, its Megatron fields) reads as the shipped file", () => {
    const exported = variant('llama2_7b_deepspeed.json', (d) => {
      delete d.model.largest_layer_params;
      Object.assign(d.model, {
        moe_enabled: false,
        num_experts: 1,
        top_k: 1,
        expert_intermediate_size: null,
        shared_expert_intermediate_size: null,
      });
      Object.assign(d.engine, { sharding_strategy: null, use_distributed_optimizer: false, num_micro_batches: 1 });
    });
    assert.deepEqual(ok(exported).per_gpu, ok(data('llama2_7b_deepspeed.json')).per_gpu);
  });

  test('its Megatron fields: use_distributed_optimizer and num_micro_batches are applied, not dropped', () => {
    // 1024 GPUs / (tp 8 x pp 16) = dp 8. The distributed optimizer shards the fp32 master weights and
    // both Adam moments over those 8 ranks; without it every rank keeps them whole: 8 x as much.
    const on = ok(variant('gpt3_175b_megatron.json', (d) => (d.engine.use_distributed_optimizer = true)));
    const off = ok(variant('gpt3_175b_megatron.json', (d) => (d.engine.use_distributed_optimizer = false)));
    assert.equal(on.scenario.engine.use_distributed_optimizer, true);
    assert.equal(off.scenario.engine.use_distributed_optimizer, false);
    const states = (r) => r.per_gpu.components.optimizer_states;
    assert.ok(Math.abs(states(off) / states(on) - 8) < 1e-9, `${states(off)} / ${states(on)}`);
    // The shipped file leaves it out: Megatron's distributed optimizer, said in defaults_applied.
    assert.ok(has(ok(data('gpt3_175b_megatron.json')).defaults_applied, 'use_distributed_optimizer = true'));
    // On another engine it is meaningless: false (its web page writes it for every engine) is quiet, true warns.
    const ds = ok(variant('llama2_7b_deepspeed.json', (d) => (d.engine.use_distributed_optimizer = true)));
    assert.ok(has(ds.warnings, 'use_distributed_optimizer applies to megatron only'), ds.warnings.join('\n'));
    // num_micro_batches is the step's micro-batches: gradient accumulation (and the pipeline's micro-batches,
    // max(4, pp 16) = 16 here), said in defaults_applied.
    const micro = ok(
      variant('gpt3_175b_megatron.json', (d) => {
        delete d.training.gradient_accumulation_steps;
        d.engine.num_micro_batches = 4;
      }),
    );
    assert.equal(micro.scenario.training.gradient_accumulation_steps, 4);
    assert.ok(has(micro.defaults_applied, 'gradient_accumulation_steps = 4 (engine.num_micro_batches)'));
    // Both given and different (its page writes num_micro_batches 1 beside any accumulation): the accumulation
    // steps win, and a warning names both.
    const clash = ok(variant('gpt3_175b_megatron.json', (d) => (d.engine.num_micro_batches = 4)));
    assert.equal(clash.scenario.training.gradient_accumulation_steps, 1);
    assert.ok(has(clash.warnings, 'num_micro_batches (4) differs from training.gradient_accumulation_steps (1)'));
    // On another engine: ignored, and said when it would have mattered.
    const ddp = ok(variant('pytorch_ddp_example.json', (d) => (d.engine.num_micro_batches = 8)));
    assert.equal(ddp.scenario.training.gradient_accumulation_steps, 2);
    assert.ok(has(ddp.warnings, 'num_micro_batches applies to megatron training only'), ddp.warnings.join('\n'));
  });

  test('mixture of experts (its Mixtral preset): routed experts counted, top_k of them active', () => {
    const mixtral = {
      name: 'mixtral-8x7b',
      num_layers: 32,
      hidden_size: 4096,
      num_attention_heads: 32,
      vocab_size: 32000,
      max_seq_len: 32768,
      moe_enabled: true,
      num_experts: 8,
      top_k: 2,
      expert_intermediate_size: 14336,
    };
    const r = ok(variant('llama2_7b_deepspeed.json', (d) => (d.model = mixtral)));
    // Per layer: q, k, v, o 4 x 4096^2 = 67,108,864; 8 experts x 3 x 4096 x 14336 = 1,409,286,144;
    // router 8 x 4096 = 32,768; two norms 8,192: 1,476,435,968, x 32 = 47,245,950,976; + embedding and
    // head 2 x 32000 x 4096 = 262,144,000 + final norm 4,096 = 47,508,099,072.
    assert.equal(r.parameters.total, 47_508_099_072);
    assert.equal(r.parameters.exact, true);
    // Routed 32 x 1,409,286,144 = 45,097,156,608, of which a token visits 2 of 8:
    // 47,508,099,072 - 45,097,156,608 + 45,097,156,608 / 4 = 13,685,231,616.
    assert.equal(r.parameters.active, 13_685_231_616);
    assert.equal(r.parameters.per_component.experts, 45_097_156_608 + 32 * 8 * 4096);
  });

  test('hardware.num_gpus: a multiple of tp x pp sets dp; any other count is an error naming both', () => {
    const gpus = (n) => estimate(variant('gpt3_175b_megatron.json', (d) => (d.hardware.num_gpus = n)));
    // 2048 / (tp 8 x pp 16) = 16.
    const { code, result } = gpus(2048);
    assert.equal(code, 0);
    assert.equal(result.scenario.parallelism.data_parallel_size, 16);
    // 1000 is no multiple of 128; 64 is fewer than one replica.
    for (const n of [1000, 64]) {
      const bad = gpus(n);
      assert.equal(bad.code, 1, `num_gpus ${n}`);
      assert.equal(bad.result.errors[0].field, 'hardware.num_gpus');
      assert.match(bad.result.errors[0].problem, /\(128\)/);
      assert.equal(bad.result.errors[0].value, String(n));
    }
  });
});
