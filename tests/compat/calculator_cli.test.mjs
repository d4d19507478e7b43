// The command lines of gpu_memory_calculator.py's README, run as written with `gpumem` in place of
// `python gpu_memory_calculator.py` (no command: estimate), against the mock Hub. Each test names
// the README section it comes from and derives the numbers gpumem must print.
//
//   node --test tests/compat/calculator_cli.test.mjs
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { GiB, startCompat } from './harness.mjs';

let compat;
before(async () => { compat = await startCompat(); });
after(async () => { await compat?.close(); });

const run = (args, env) => compat.run(args, env);
const json = async (args) => {
  const r = await run([...args, '--json']);
  assert.equal(r.code, 0, `${args.join(' ')}: ${r.all}`);
  return JSON.parse(r.stdout);
};

// microsoft/phi-2 (bundled preset, its config.json as published): 32 layers of hidden 2560, MLP
// 10240, vocab 51200, biases everywhere and an untied head with a bias:
//   embedding 51200 x 2560 = 131,072,000; head 131,072,000 + 51,200 bias = 131,123,200;
//   per layer: q,k,v,o 4 x (2560^2 + 2560) = 26,224,640; fc1 + fc2 2 x 2560 x 10240 + 10240 + 2560 = 52,441,600;
//   one LayerNorm 2 x 2560 = 5,120 -> 78,671,360 x 32 = 2,517,483,520; final norm 5,120
//   total 131,072,000 + 2,517,483,520 + 5,120 + 131,123,200 = 2,779,683,840 (the README's count, exactly)
const PHI2 = 2779683840;

describe('Quick Start and Basic Usage', () => {
  test('gpumem --model microsoft/phi-2 --mode training', async () => {
    const r = await run(['--model', 'microsoft/phi-2', '--mode', 'training']);
    assert.equal(r.code, 0, r.all);
    assert.match(r.stdout, /microsoft\/phi-2 \(phi, 2,779,683,840 parameters\)/);
    // The lines the README's output has beyond gpumem's components, shown inside them:
    // embeddings 131,072,000 x 4 B (fp32 weights under bf16 AMP) = 524,288,000 B = 0.49 GiB;
    // input data: 1 x 2048 tokens x (8 B id + 2560 x 2 B) = 10,502,144 B = 0.01 GiB, in the activations,
    // which the optimizer step (this run's peak) no longer holds.
    assert.match(r.stdout, /\(input data, freed by then\)\s+0\.01\n/);
    // "Estimated GPUs needed" on the README's three cards.
    assert.match(r.stdout, /GPUs needed \(the same scenario on each card/);
    for (const card of ['A100-80GB', 'H100-80GB', 'A100-40GB']) assert.match(r.stdout, new RegExp(`  ${card}\\s+\\d+\\.\\d\\d -> `));
    const res = await json(['--model', 'microsoft/phi-2', '--mode', 'training']);
    assert.equal(res.parameters.total, PHI2);
    assert.equal(res.parameters.exact, true);
  });

  test('gpumem estimate ... is the same estimate as the command-less line', async () => {
    const a = await json(['--model', 'microsoft/phi-2', '--mode', 'training']);
    const b = await json(['estimate', '--model', 'microsoft/phi-2', '--mode', 'training']);
    assert.deepEqual(a.per_gpu, b.per_gpu);
  });

  test('legacy short names: llama3-8b, llama3-70b, llama2-7b, llama2-13b', async () => {
    // As the README converts them; each count is the preset's published total.
    const names = {
      'llama3-8b': ['meta-llama/Meta-Llama-3-8B', 8030261248],
      'llama3-70b': ['meta-llama/Meta-Llama-3-70B', 70553706496],
      'llama2-7b': ['meta-llama/Llama-2-7b-hf', 6738415616],
      'llama2-13b': ['meta-llama/Llama-2-13b-hf', 13015864320],
    };
    for (const [short, [id, total]] of Object.entries(names)) {
      const res = await json(['--model', short, '--mode', 'training']);
      assert.equal(res.model.name, id, short);
      assert.equal(res.parameters.total, total, short);
    }
  });
});

describe('Training Examples', () => {
  test('--precision bf16 --optimizer adamw --batch-size 4 --seq-length 2048', async () => {
    const args = ['--model', 'microsoft/phi-2', '--mode', 'training', '--precision', 'bf16', '--optimizer', 'adamw',
      '--batch-size', '4', '--seq-length', '2048'];
    const res = await json(args);
    const t = res.scenario.training;
    assert.deepEqual([t.dtype, t.optimizer, t.batch_size, t.seq_len], ['bf16', 'adamw', 4, 2048]);
    // AdamW: two fp32 moments per parameter: 2,779,683,840 x 8 B = 22,237,470,720 B (20.71 GiB).
    assert.equal(res.per_gpu.components.optimizer_states, PHI2 * 8);
    const r = await run(args);
    // Input data: 4 x 2048 x (8 + 2560 x 2) B = 42,008,576 B = 0.04 GiB (the README's 0.04 GB).
    assert.match(r.stdout, /of which input data\s+0\.04\n/);
  });

  test('--precision bf16 --optimizer adamw --batch-size 4 --gradient-checkpointing', async () => {
    const plain = await json(['--model', 'microsoft/phi-2', '--mode', 'training', '--precision', 'bf16',
      '--optimizer', 'adamw', '--batch-size', '4']);
    const ckpt = await json(['--model', 'microsoft/phi-2', '--mode', 'training', '--precision', 'bf16',
      '--optimizer', 'adamw', '--batch-size', '4', '--gradient-checkpointing']);
    assert.equal(ckpt.scenario.training.activation_checkpointing, 'full');
    // Each layer keeps only its input: far less than the ~70 % the README's rule of thumb saves.
    assert.ok(ckpt.per_gpu.components.activations < 0.3 * plain.per_gpu.components.activations);
  });

  test('--optimizer sgd-momentum --precision bf16', async () => {
    const res = await json(['--model', 'microsoft/phi-2', '--mode', 'training', '--optimizer', 'sgd-momentum',
      '--precision', 'bf16']);
    assert.equal(res.scenario.training.optimizer, 'sgd_momentum');
    // One fp32 momentum buffer: 2,779,683,840 x 4 B = 11,118,735,360 B.
    assert.equal(res.per_gpu.components.optimizer_states, PHI2 * 4);
  });

  test('all 15 optimizers of "Available Optimizers", with their state per parameter', async () => {
    // fp32 moments (bf16 AMP): bytes per parameter = 4 x moments. adafactor: factored (a row and a
    // column per matrix); shampoo: preconditioners per block, more than Adam.
    const moments = {
      sgd: 0, 'sgd-momentum': 1, nesterov: 1, adagrad: 1, rmsprop: 1, adam: 2, adamw: 2, lamb: 2, lion: 1, nadam: 2,
      amsgrad: 3, 'sparse-adam': 2, adabelief: 2,
    };
    for (const name of [...Object.keys(moments), 'adafactor', 'shampoo']) {
      const res = await json(['--model', 'microsoft/phi-2', '--mode', 'training', '--optimizer', name]);
      assert.equal(res.scenario.training.optimizer, name.replace('-', '_'), name);
      const states = res.per_gpu.components.optimizer_states;
      if (name in moments) assert.equal(states, PHI2 * 4 * moments[name], name);
      else if (name === 'adafactor') assert.ok(states > 0 && states < PHI2 * 0.1, `${name}: ${states}`);
      else assert.ok(states > PHI2 * 8, `${name}: ${states}`);
    }
  });

  test('the five precisions: fp32, fp16, bf16 set the compute dtype; int8 and int4 do not train', async () => {
    for (const [precision, dtype] of [['fp32', 'fp32'], ['fp16', 'fp16'], ['bf16', 'bf16'], ['float16', 'fp16'],
      ['bfloat16', 'bf16']]) {
      const res = await json(['--model', 'microsoft/phi-2', '--mode', 'training', '--precision', precision]);
      assert.equal(res.scenario.training.dtype, dtype, precision);
    }
    for (const precision of ['int8', 'int4']) {
      const r = await run(['--model', 'microsoft/phi-2', '--mode', 'training', '--precision', precision]);
      assert.equal(r.code, 2, r.all);
      assert.match(r.stderr, new RegExp(`--precision ${precision} does not apply to mode training`));
    }
    // A recipe name keeps meaning the recipe; both given, each sets its own field.
    const both = await json(['--model', 'microsoft/phi-2', '--precision', 'bf16', '--precision', 'pure']);
    assert.deepEqual([both.scenario.training.dtype, both.scenario.training.precision], ['bf16', 'pure']);
    // pure bf16: weights 2,779,683,840 x 2 B = 5,559,367,680 B = 5.18 GiB (the README's "Model Weights").
    assert.equal(both.per_gpu.components.weights, PHI2 * 2);
    assert.equal((both.per_gpu.components.weights / GiB).toFixed(2), '5.18');
  });
});

describe('Inference Examples', () => {
  test('--mode inference --precision bf16 --batch-size 1 --seq-length 2048', async () => {
    const args = ['--model', 'microsoft/phi-2', '--mode', 'inference', '--precision', 'bf16', '--batch-size', '1',
      '--seq-length', '2048'];
    const res = await json(args);
    const i = res.scenario.inference;
    assert.deepEqual([i.weight_format, i.batch_size, i.context_len, i.kv_cache], ['bf16', 1, 2048, true]);
    // Weights 2,779,683,840 x 2 B; KV cache 32 layers x 2 (K, V) x 2560 x 2 B x 2048 tokens = 671,088,640 B.
    assert.equal(res.per_gpu.components.weights, PHI2 * 2);
    assert.equal(res.per_gpu.components.kv_cache, 32 * 2 * 2560 * 2 * 2048);
    const r = await run(args);
    // Embeddings 131,072,000 x 2 B = 0.24 GiB (the README's 0.24 GB).
    assert.match(r.stdout, /of which embeddings\s+0\.24\n/);
  });

  test('--mode inference --precision bf16 --no-kv-cache', async () => {
    const res = await json(['--model', 'microsoft/phi-2', '--mode', 'inference', '--precision', 'bf16', '--no-kv-cache']);
    assert.equal(res.scenario.inference.kv_cache, false);
    assert.equal(res.per_gpu.components.kv_cache ?? 0, 0);
  });

  test('--precision int8 and int4 in inference store the weights in those formats (not fp16)', async () => {
    const fp16 = await json(['--model', 'microsoft/phi-2', '--mode', 'inference']);
    assert.equal(fp16.scenario.inference.weight_format, 'fp16');  // the checkpoint's dtype
    const int8 = await json(['--model', 'microsoft/phi-2', '--mode', 'inference', '--precision', 'int8']);
    const int4 = await json(['--model', 'microsoft/phi-2', '--mode', 'inference', '--precision', 'int4']);
    assert.equal(int8.scenario.inference.weight_format, 'int8');
    assert.equal(int4.scenario.inference.weight_format, 'int4');
    assert.ok(int8.per_gpu.components.weights < 0.6 * fp16.per_gpu.components.weights);
    assert.ok(int4.per_gpu.components.weights < int8.per_gpu.components.weights);
  });

  test('any Hub model: phi-2 inference, Mistral-7B and Meta-Llama-3-8B training', async () => {
    const phi = await json(['--model', 'microsoft/phi-2', '--mode', 'inference']);
    assert.equal(phi.scenario.mode, 'inference');
    const mistral = await json(['--model', 'mistralai/Mistral-7B-v0.1', '--mode', 'training']);
    assert.equal(mistral.parameters.total, 7241732096);
    const llama = await json(['--model', 'meta-llama/Meta-Llama-3-8B', '--mode', 'training']);
    assert.equal(llama.parameters.total, 8030261248);
  });

  test('a model no preset has comes from the Hub (HF_ENDPOINT)', async () => {
    const r = await run(['--model', 'microsoft/DialoGPT-medium', '--mode', 'inference']);
    assert.equal(r.code, 0, r.all);
    assert.match(r.stderr, /microsoft\/DialoGPT-medium \(main\): config\.json from the Hub/);
  });
});

describe('GPU names as the README writes them', () => {
  test('"A100 80GB", "H100 80GB", "A100 40GB" and the family "A100" resolve to the catalogue', async () => {
    const cards = { 'A100 80GB': 'A100-80GB', 'H100 80GB': 'H100-80GB', 'A100 40GB': 'A100-40GB', a100: 'A100-80GB' };
    for (const [name, id] of Object.entries(cards)) {
      const res = await json(['--model', 'microsoft/phi-2', '--gpu', name]);
      assert.equal(res.scenario.hardware.gpu, id, name);
    }
    // A family picks its documented default and says so (presets/gpus.json "families").
    const family = await json(['--model', 'microsoft/phi-2', '--gpu', 'a100']);
    assert.ok(family.defaults_applied.some((d) => /"a100" names a family: read as A100-80GB .*also has A100-40GB/.test(d)));
  });
});

describe('--load-full-model, and flags of the other mode', () => {
  test('--load-full-model is accepted, changes nothing, and says so', async () => {
    const plain = await json(['--model', 'microsoft/phi-2', '--mode', 'training']);
    const r = await run(['--model', 'microsoft/phi-2', '--mode', 'training', '--load-full-model', '--json']);
    assert.equal(r.code, 0, r.all);
    assert.deepEqual(JSON.parse(r.stdout).per_gpu, plain.per_gpu);
    assert.match(r.stderr, /note: --load-full-model changes nothing/);
  });

  test('a flag that does not apply to the mode is an error naming the flag and the mode', async () => {
    const cases = [
      [['--mode', 'inference', '--lora-rank', '8'], /--lora-rank does not apply to mode inference/],
      [['--mode', 'inference', '--gradient-checkpointing'], /--gradient-checkpointing does not apply to mode inference/],
      [['--mode', 'inference', '--optimizer', 'adamw'], /--optimizer does not apply to mode inference/],
      [['--mode', 'inference', '--precision', 'pure'], /--precision pure does not apply to mode inference/],
      [['--mode', 'training', '--no-kv-cache'], /--no-kv-cache does not apply to mode training/],
      [['--context-len', '4096'], /--context-len does not apply to mode training/],
    ];
    for (const [flags, message] of cases) {
      const r = await run(['--model', 'microsoft/phi-2', ...flags]);
      assert.equal(r.code, 2, `${flags.join(' ')}: ${r.all}`);
      assert.match(r.stderr, message);
    }
  });
});
