// Black-box tests of the `gpumem` command-line tool: each test runs the binary as a subprocess and
// checks what a user sees (stdout, stderr, exit code) against the CLI contract in README.md.
//
//   node --test tests/cli/
//   GPUMEM_CLI=path/to/gpumem node --test tests/cli/     (default build/native/core/cli/gpumem)
//
// Exit codes: 0 ok, 1 invalid input (malformed JSON, invalid field, unknown model, missing file),
// 2 usage (unknown command or flag, missing flag value).
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
const scenarioDir = path.join(repo, 'tests', 'data', 'scenarios');
const llama3Config = path.join(here, 'data', 'meta-llama-3-8b.config.json');
// meta-llama/Meta-Llama-3-8B: sum(p.numel()) as published (Hub safetensors metadata).
const LLAMA3_8B_TOTAL = 8030261248;

if (!fs.existsSync(cli)) {
  throw new Error(`gpumem CLI not found at ${cli}: build it (./make.sh test) or set GPUMEM_CLI`);
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gpumem-cli-test-'));
process.on('exit', () => fs.rmSync(tmp, { recursive: true, force: true }));

// The CLI never reaches the network here: an id that is not bundled would go to the Hub, which
// tests/cli/hub.test.mjs mocks; here HF_HUB_OFFLINE=1 and an empty HF_HOME make it a cache miss.
const hubless = { ...process.env, HF_HUB_OFFLINE: '1', HF_HOME: path.join(tmp, 'hf-home') };

function run(args, input) {
  const r = spawnSync(cli, args, { input: input ?? '', encoding: 'utf8', timeout: 60_000, maxBuffer: 64 << 20, env: hubless });
  if (r.error) throw r.error;
  return { code: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr, all: r.stdout + r.stderr };
}

// Asserts the exit code and shows what the tool printed when it differs.
function expectExit(r, code, what) {
  assert.equal(r.signal, null, `${what}: killed by ${r.signal}`);
  assert.equal(r.code, code, `${what}: exit ${r.code}, expected ${code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
}

function parseJson(text, what) {
  try {
    return JSON.parse(text);
  } catch (e) {
    assert.fail(`${what}: stdout is not JSON (${e.message}):\n${text.slice(0, 2000)}`);
  }
}

function writeTmp(name, content) {
  const file = path.join(tmp, name);
  fs.writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content, null, 2));
  return file;
}

const scenarioFile = (name) => path.join(scenarioDir, name);
const readScenario = (name) => JSON.parse(fs.readFileSync(scenarioFile(name), 'utf8'));

const llamaTraining = {
  version: 1,
  model: { preset: 'meta-llama/Llama-3.1-8B' },
  mode: 'training',
  training: { method: 'full', batch_size: 1, seq_len: 2048, dtype: 'bf16', optimizer: 'adamw' },
  hardware: { num_gpus: 1, gpu_memory_gb: 80 },
};
const COMPONENTS = ['weights', 'gradients', 'optimizer_states', 'activations', 'logits', 'kv_cache', 'overheads'];

// The result keys docs/scenario.md makes the contract.
function checkResult(res, what) {
  assert.equal(res.ok, true, `${what}: ok is not true: ${JSON.stringify(res.errors ?? res).slice(0, 500)}`);
  assert.equal(typeof res.parameters?.total, 'number', `${what}: parameters.total`);
  assert.equal(typeof res.parameters?.trainable, 'number', `${what}: parameters.trainable`);
  const g = res.per_gpu;
  assert.ok(g, `${what}: per_gpu`);
  for (const k of ['peak_allocated_bytes', 'peak_reserved_bytes', 'device_total_bytes']) {
    assert.ok(Number.isFinite(g[k]) && g[k] > 0, `${what}: per_gpu.${k} = ${g[k]}`);
  }
  assert.ok(g.peak_reserved_bytes >= g.peak_allocated_bytes, `${what}: reserved < allocated`);
  assert.ok(g.device_total_bytes >= g.peak_reserved_bytes, `${what}: device total < reserved`);
  for (const c of COMPONENTS) {
    assert.ok(Number.isFinite(g.components?.[c]) && g.components[c] >= 0, `${what}: per_gpu.components.${c} = ${g.components?.[c]}`);
  }
  assert.equal(typeof g.peak_phase, 'string', `${what}: per_gpu.peak_phase`);
  assert.equal(typeof res.fits, 'boolean', `${what}: fits`);
  assert.ok(Number.isFinite(res.utilization), `${what}: utilization`);
  assert.ok(Array.isArray(res.warnings), `${what}: warnings`);
  assert.ok(Array.isArray(res.defaults_applied), `${what}: defaults_applied`);
}

function checkErrors(res, what) {
  assert.equal(res.ok, false, `${what}: expected ok:false, got ${JSON.stringify(res).slice(0, 300)}`);
  assert.ok(Array.isArray(res.errors) && res.errors.length > 0, `${what}: errors must be a non-empty list`);
  for (const e of res.errors) {
    assert.equal(typeof e.message, 'string', `${what}: every error has a message`);
    assert.equal(typeof e.field, 'string', `${what}: every error names its field`);
  }
}

describe('help, version, presets', () => {
  test('--help lists every command and exits 0', () => {
    const r = run(['--help']);
    expectExit(r, 0, '--help');
    for (const cmd of ['estimate', 'params', 'quick', 'validate', 'presets', 'version']) {
      assert.match(r.stdout, new RegExp(`\\b${cmd}\\b`), `--help mentions ${cmd}`);
    }
  });

  test('version prints MAJOR.MINOR.PATCH', () => {
    const r = run(['version']);
    expectExit(r, 0, 'version');
    assert.match(r.stdout.trim(), /\d+\.\d+\.\d+/);
  });

  test('presets lists the bundled models; --json is {models, gpus}', () => {
    const r = run(['presets']);
    expectExit(r, 0, 'presets');
    assert.match(r.stdout, /meta-llama\/Llama-3\.1-8B/);
    const j = run(['presets', '--json']);
    expectExit(j, 0, 'presets --json');
    const p = parseJson(j.stdout, 'presets --json');
    assert.ok(Array.isArray(p.models) && p.models.length >= 20, 'models list');
    assert.ok(Array.isArray(p.gpus) && p.gpus.length > 0, 'gpus list');
    const llama = p.models.find((m) => m.id === 'meta-llama/Llama-3.1-8B');
    assert.ok(llama, 'meta-llama/Llama-3.1-8B is a preset');
    assert.equal(llama.total_params, 8030261248);
    for (const g of p.gpus) assert.equal(typeof g.id, 'string');
  });
});

describe('estimate', () => {
  const file = () => writeTmp('llama-training.json', llamaTraining);

  test('--scenario FILE prints a readable breakdown table', () => {
    const r = run(['estimate', '--scenario', file()]);
    expectExit(r, 0, 'estimate --scenario');
    assert.ok(!r.stdout.trim().startsWith('{'), 'the default output is a table, not JSON');
    assert.match(r.stdout, /weights/i);
    assert.match(r.stdout, /gradients/i);
    assert.match(r.stdout, /optimizer/i);
    assert.match(r.stdout, /GiB/);
    assert.match(r.stdout, /fits/i);
  });

  test('--scenario FILE --json prints the result document', () => {
    const r = run(['estimate', '--scenario', file(), '--json']);
    expectExit(r, 0, 'estimate --json');
    const res = parseJson(r.stdout, 'estimate --json');
    checkResult(res, 'llama training');
    assert.equal(res.parameters.total, 8030261248); // Llama-3.1-8B, published count
    assert.equal(res.parameters.trainable, 8030261248); // full fine-tuning trains everything
    // Components are those live at the peak: full fine-tuning with AdamW peaks in the optimizer
    // step (activations freed by then) or in the backward pass.
    const c = res.per_gpu.components;
    for (const k of ['weights', 'gradients', 'optimizer_states']) assert.ok(c[k] > 0, `${k} > 0`);
    assert.equal(c.kv_cache, 0, 'no KV cache in training');
    // bf16 weights: 2 B per parameter, on one GPU.
    assert.ok(c.weights >= 2 * 8030261248, `weights ${c.weights} >= 2 B × params`);
  });

  test('--scenario - reads stdin and gives the same answer as the file', () => {
    const viaFile = run(['estimate', '--scenario', file(), '--json']);
    const viaStdin = run(['estimate', '--scenario', '-', '--json'], JSON.stringify(llamaTraining));
    expectExit(viaStdin, 0, 'estimate --scenario -');
    assert.equal(viaStdin.stdout, viaFile.stdout);
  });

  test('an inference scenario has a KV cache and no gradients', () => {
    const r = run(['estimate', '--scenario', scenarioFile('infer-llama31-8b-minimal.json'), '--json']);
    expectExit(r, 0, 'inference');
    const res = parseJson(r.stdout, 'inference');
    checkResult(res, 'inference');
    assert.ok(res.per_gpu.components.kv_cache > 0, 'kv_cache > 0');
    assert.equal(res.per_gpu.components.gradients, 0);
    assert.equal(res.per_gpu.components.optimizer_states, 0);
  });

  test('an inline hf_config counts like the preset', () => {
    const r = run(['estimate', '--scenario', scenarioFile('hf-config-meta-llama-3-8b-training.json'), '--json']);
    expectExit(r, 0, 'hf_config');
    assert.equal(parseJson(r.stdout, 'hf_config').parameters.total, LLAMA3_8B_TOTAL);
  });

  test("gpu-mem-calculator's config file (\"num_parameters\": \"7B\") is a valid scenario", () => {
    const r = run(['estimate', '--scenario', scenarioFile('gpu-mem-calculator-llama2-7b-deepspeed-zero3.json'), '--json']);
    expectExit(r, 0, 'gpu-mem-calculator config');
    const res = parseJson(r.stdout, 'gpu-mem-calculator config');
    checkResult(res, 'gpu-mem-calculator config');
    assert.equal(res.parameters.total, 7e9);
    assert.ok(res.host_bytes > 0, 'optimizer offloaded to CPU needs host memory');
  });
});

describe('estimate flags', () => {
  // Each flag maps onto one scenario field; the result echoes the resolved scenario.
  const cases = [
    [['--mode', 'inference'], 'mode', 'inference'],
    [['--method', 'lora'], 'training.method', 'lora'],
    [['--lora'], 'training.method', 'lora'],
    [['--qlora'], 'training.method', 'qlora'],
    [['--lora', '--lora-rank', '32'], 'training.lora.rank', 32],
    [['--lora', '--lora-alpha', '64'], 'training.lora.alpha', 64],
    [['--dtype', 'fp16'], 'training.dtype', 'fp16'],
    [['--precision', 'pure'], 'training.precision', 'pure'],
    [['--optimizer', 'sgd'], 'training.optimizer', 'sgd'],
    [['--batch-size', '3'], 'training.batch_size', 3],
    [['--seq-len', '1024'], 'training.seq_len', 1024],
    [['--grad-accum', '8'], 'training.gradient_accumulation_steps', 8],
    [['--gradient-checkpointing'], 'training.activation_checkpointing', 'full'],
    [['--activation-checkpointing', 'selective'], 'training.activation_checkpointing', 'selective'],
    [['--attention', 'eager'], 'training.attention', 'eager'],
    [['--loss', 'fused'], 'training.loss', 'fused'],
    [['--engine', 'ddp', '--dp', '2', '--num-gpus', '2'], 'engine.type', 'ddp'],
    [['--engine', 'deepspeed', '--zero', '2', '--dp', '2', '--num-gpus', '2'], 'engine.zero_stage', 2],
    [['--engine', 'deepspeed', '--zero', '3', '--offload-optimizer', 'cpu'], 'engine.offload_optimizer', 'cpu'],
    [['--engine', 'deepspeed', '--zero', '3', '--offload-param', 'cpu'], 'engine.offload_param', 'cpu'],
    [['--engine', 'fsdp', '--dp', '4', '--num-gpus', '4'], 'parallelism.data_parallel_size', 4],
    [['--engine', 'megatron', '--tp', '2', '--num-gpus', '2'], 'parallelism.tensor_parallel_size', 2],
    [['--engine', 'megatron', '--pp', '2', '--num-gpus', '2'], 'parallelism.pipeline_parallel_size', 2],
    [['--engine', 'megatron', '--cp', '2', '--num-gpus', '2'], 'parallelism.context_parallel_size', 2],
    [['--engine', 'megatron', '--tp', '2', '--sequence-parallel', '--num-gpus', '2'], 'parallelism.sequence_parallel', true],
    [['--hf-config', 'MIXTRAL', '--engine', 'megatron', '--ep', '2', '--num-gpus', '2'], 'parallelism.expert_parallel_size', 2],
    [['--num-gpus', '4', '--dp', '4', '--engine', 'ddp'], 'hardware.num_gpus', 4],
    [['--gpu-mem', '48'], 'hardware.gpu_memory_gb', 48],
    [['--mode', 'inference', '--context-len', '8192'], 'inference.context_len', 8192],
    [['--mode', 'inference', '--weight-format', 'int4'], 'inference.weight_format', 'int4'],
    [['--mode', 'inference', '--kv-cache-dtype', 'fp8'], 'inference.kv_cache_dtype', 'fp8'],
    [['--mode', 'inference', '--no-kv-cache'], 'inference.kv_cache', false],
  ];
  // Mixtral is no bundled preset: its config.json comes from the scenario that carries it inline.
  const mixtralConfig = () =>
    writeTmp('mixtral.config.json', readScenario('hf-config-mixtral-8x7b-tp2-fp8-inference.json').model.hf_config);
  const get = (obj, dotted) => dotted.split('.').reduce((o, k) => (o == null ? undefined : o[k]), obj);

  for (const [flags, field, want] of cases) {
    test(`${flags.join(' ')} -> ${field} = ${JSON.stringify(want)}`, () => {
      const args = flags.includes('--hf-config') ? [] : ['--model', 'llama3-8b'];
      const r = run(['estimate', ...args, ...flags.map((x) => (x === 'MIXTRAL' ? mixtralConfig() : x)), '--json']);
      expectExit(r, 0, flags.join(' '));
      const res = parseJson(r.stdout, flags.join(' '));
      checkResult(res, flags.join(' '));
      assert.deepEqual(get(res.scenario, field), want, `result.scenario.${field}`);
    });
  }

  test('--gpu ID picks a GPU from the catalogue', () => {
    const gpus = parseJson(run(['presets', '--json']).stdout, 'presets').gpus;
    const gpu = gpus[gpus.length - 1];
    const r = run(['estimate', '--model', 'llama3-8b', '--gpu', gpu.id, '--json']);
    expectExit(r, 0, `--gpu ${gpu.id}`);
    const res = parseJson(r.stdout, '--gpu');
    assert.equal(res.scenario.hardware.gpu, gpu.id);
  });

  test('--hf-config FILE names the model by its config.json', () => {
    const r = run(['estimate', '--hf-config', llama3Config, '--json']);
    expectExit(r, 0, '--hf-config');
    const res = parseJson(r.stdout, '--hf-config');
    checkResult(res, '--hf-config');
    assert.equal(res.parameters.total, LLAMA3_8B_TOTAL);
  });

  test('flags override the scenario file', () => {
    // LoRA: small gradients and optimizer states, so the peak falls where activations live.
    const lora = { ...llamaTraining, training: { ...llamaTraining.training, method: 'lora' } };
    const f = writeTmp('override.json', lora);
    const base = parseJson(run(['estimate', '--scenario', f, '--json']).stdout, 'base');
    const r = run(['estimate', '--scenario', f, '--batch-size', '4', '--seq-len', '4096', '--json']);
    expectExit(r, 0, 'override');
    const res = parseJson(r.stdout, 'override');
    assert.equal(res.scenario.training.batch_size, 4);
    assert.equal(res.scenario.training.seq_len, 4096);
    assert.equal(res.parameters.total, base.parameters.total, 'the model still comes from the file');
    assert.equal(res.scenario.training.method, 'lora', 'fields without a flag still come from the file');
    // 8× the tokens: activations grow, weights do not.
    assert.ok(res.per_gpu.components.activations > base.per_gpu.components.activations,
      `more tokens, more activations (${res.per_gpu.peak_phase}: ${res.per_gpu.components.activations} vs ${base.per_gpu.peak_phase}: ${base.per_gpu.components.activations})`);
    assert.ok(res.per_gpu.peak_allocated_bytes > base.per_gpu.peak_allocated_bytes, 'a higher peak');
    assert.equal(res.per_gpu.components.weights, base.per_gpu.components.weights);
  });

  test('--model overrides the file\'s model', () => {
    const f = writeTmp('override-model.json', llamaTraining);
    const r = run(['estimate', '--scenario', f, '--model', 'Qwen/Qwen2.5-7B', '--json']);
    expectExit(r, 0, '--model override');
    assert.equal(parseJson(r.stdout, '--model override').parameters.total, 7615616512); // Qwen2.5-7B, published
  });

  test('flags alone, table output', () => {
    const r = run(['estimate', '--model', 'meta-llama/Llama-3.1-8B', '--lora', '--batch-size', '2']);
    expectExit(r, 0, 'flags table');
    assert.match(r.stdout, /weights/i);
  });
});

describe('estimate --jsonl', () => {
  test('one result per line, in order; a bad line in the middle yields an error and the rest go on', () => {
    const lines = [
      JSON.stringify({ ...llamaTraining, training: { ...llamaTraining.training, batch_size: 1 } }),
      '',
      '{"model": {"preset": "meta-llama/Llama-3.1-8B"}, "training": ', // malformed
      JSON.stringify({ ...llamaTraining, training: { ...llamaTraining.training, batch_size: -4 } }), // invalid field
      '   ',
      JSON.stringify({ ...llamaTraining, training: { ...llamaTraining.training, batch_size: 2 } }),
      JSON.stringify({ version: 1, model: { preset: 'Qwen/Qwen2.5-7B' }, mode: 'inference' }),
    ];
    const r = run(['estimate', '--jsonl'], lines.join('\n') + '\n');
    expectExit(r, 1, 'jsonl with invalid lines');
    const out = r.stdout.split('\n').filter((l) => l !== '');
    assert.equal(out.length, 5, `5 non-blank input lines give 5 output lines, got:\n${r.stdout}`);
    const res = out.map((l, i) => parseJson(l, `jsonl line ${i + 1}`));
    checkResult(res[0], 'line 1');
    checkErrors(res[1], 'line 2 (malformed)');
    checkErrors(res[2], 'line 3 (batch_size -4)');
    assert.ok(res[2].errors.some((e) => e.field === 'training.batch_size'), 'the error names training.batch_size');
    checkResult(res[3], 'line 4');
    checkResult(res[4], 'line 5');
    assert.equal(res[0].scenario.training.batch_size, 1);
    assert.equal(res[3].scenario.training.batch_size, 2);
    assert.equal(res[4].scenario.mode, 'inference');
    assert.equal(res[4].parameters.total, 7615616512);
  });

  test('all valid: exit 0, and each line equals the --json result', () => {
    const names = ['train-full-llama31-8b-minimal.json', 'infer-llama31-8b-minimal.json', 'engine-deepspeed-zero3-offload-cpu.json'];
    const r = run(['estimate', '--jsonl'], names.map((n) => JSON.stringify(readScenario(n))).join('\n'));
    expectExit(r, 0, 'jsonl all valid');
    const out = r.stdout.split('\n').filter((l) => l !== '');
    assert.equal(out.length, names.length);
    names.forEach((n, i) => {
      const single = run(['estimate', '--scenario', scenarioFile(n), '--json']);
      expectExit(single, 0, n);
      assert.deepEqual(JSON.parse(out[i]), JSON.parse(single.stdout), `${n}: jsonl and --json agree`);
    });
  });

  test('empty input: no output, exit 0', () => {
    const r = run(['estimate', '--jsonl'], '');
    expectExit(r, 0, 'empty jsonl');
    assert.equal(r.stdout.trim(), '');
  });
});

describe('the scenario files in tests/data/scenarios', () => {
  // The field each invalid file must name (an error's `field` starts with it).
  const invalid = {
    'invalid-batch-size-negative.json': 'training.batch_size',
    'invalid-unknown-preset.json': 'model',
    'invalid-missing-model.json': 'model',
    'invalid-engine-type.json': 'engine.type',
    'invalid-zero-stage.json': 'engine.zero_stage',
    'invalid-mode.json': 'mode',
    'invalid-dtype.json': 'training.dtype',
    'invalid-seq-len-string.json': 'training.seq_len',
    'invalid-malformed-json.json': '',
  };
  const files = fs.readdirSync(scenarioDir).filter((f) => f.endsWith('.json')).sort();

  test('there are at least 24 of them and every invalid-* file is listed here', () => {
    assert.ok(files.length >= 24, `${files.length} scenario files`);
    for (const f of files.filter((f) => f.startsWith('invalid-'))) assert.ok(f in invalid, `${f} has an expected field`);
  });

  for (const f of files) {
    if (f.startsWith('invalid-')) {
      test(`${f}: estimate and validate exit 1 and name ${invalid[f] || 'the JSON error'}`, () => {
        const r = run(['estimate', '--scenario', scenarioFile(f), '--json']);
        expectExit(r, 1, f);
        if (f === 'invalid-malformed-json.json') {
          assert.match(r.stderr, /malformed JSON/i);
        } else {
          const res = parseJson(r.stdout, f);
          checkErrors(res, f);
          assert.ok(res.errors.some((e) => e.field.startsWith(invalid[f])), `${f}: errors name ${invalid[f]}: ${JSON.stringify(res.errors)}`);
        }
        const v = run(['validate', scenarioFile(f)]);
        expectExit(v, 1, `validate ${f}`);
        assert.ok(!/^valid\b/m.test(v.stdout), 'not reported valid');
        if (invalid[f]) assert.ok(v.all.includes(invalid[f]), `validate ${f} names ${invalid[f]}:\n${v.all}`);
      });
    } else {
      test(`${f}: estimate ok, validate says valid`, () => {
        const r = run(['estimate', '--scenario', scenarioFile(f), '--json']);
        expectExit(r, 0, f);
        checkResult(parseJson(r.stdout, f), f);
        const v = run(['validate', scenarioFile(f)]);
        expectExit(v, 0, `validate ${f}`);
        assert.match(v.stdout, /\bvalid\b/);
      });
    }
  }
});

describe('params', () => {
  // Published totals (sum(p.numel()), tied embeddings once) of the configs the scenarios carry inline.
  const published = {
    'hf-config-gemma-2-9b-sliding-window-inference.json': 9241705984,
    'hf-config-gpt-oss-20b-auto-format-inference.json': 20914757184,
    // meta-llama/Llama-3.2-11B-Vision: the Hub's safetensors total (tests/core/model_test.cpp derives it).
    'hf-config-llama-32-11b-vision-mllama-lora.json': 10670220835,
    'hf-config-meta-llama-3-8b-training.json': 8030261248,
    'hf-config-mixtral-8x7b-tp2-fp8-inference.json': 46702792704,
    'hf-config-phi-2-lora.json': 2779683840,
    'hf-config-qwen25-7b-inference.json': 7615616512,
    'hf-config-qwen3-30b-a3b-moe-megatron-ep8.json': 30532122624,
  };
  for (const [f, total] of Object.entries(published)) {
    test(`${f}: params counts ${total}`, () => {
      const cfg = writeTmp(`params-${f}`, readScenario(f).model.hf_config);
      const r = run(['params', '--hf-config', cfg, '--json']);
      expectExit(r, 0, `params ${f}`);
      assert.equal(parseJson(r.stdout, f).total, total);
    });
  }

  // Every bundled preset's config.json, as a user would pass it: the count equals the record's
  // total. "trusted" records carry an exact published figure; "derived-only" ones have none (their
  // params_source says which rounded figure agrees); the tally is printed for the issue note.
  test('--hf-config on every bundled preset counts its recorded total', () => {
    const dir = path.join(repo, 'presets', 'models');
    const tally = {};
    const files = fs.readdirSync(dir).filter((f) => f.endsWith('.json'));
    assert.ok(files.length >= 150, `${files.length} bundled presets`);
    for (const f of files) {
      const record = JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8'));
      const r = run(['params', '--hf-config', writeTmp(`preset-${f}`, record.config), '--json']);
      expectExit(r, 0, `params ${f}`);
      const p = parseJson(r.stdout, f);
      assert.equal(p.total, record.total_params, `${f}: counted ${p.total}, recorded ${record.total_params}`);
      assert.deepEqual(p.warnings, [], `${f}: a bundled family must not fall back to the generic reading`);
      tally[record.count_status] = (tally[record.count_status] ?? 0) + 1;
    }
    console.log(`params --hf-config on ${files.length} presets: ${JSON.stringify(tally)}`);
  });

  test('--hf-config FILE --json counts Meta-Llama-3-8B exactly', () => {
    const r = run(['params', '--hf-config', llama3Config, '--json']);
    expectExit(r, 0, 'params --hf-config');
    const p = parseJson(r.stdout, 'params');
    assert.equal(p.ok, true);
    assert.equal(p.total, LLAMA3_8B_TOTAL);
    assert.equal(p.trainable, LLAMA3_8B_TOTAL);
    assert.equal(typeof p.components, 'object');
    // 128256 vocab × 4096 = 525336576 input embeddings; the untied lm_head is as large.
    assert.equal(p.components.embedding, 525336576);
    assert.equal(p.components.lm_head, 525336576);
  });

  test('--hf-config FILE prints the total readably', () => {
    const r = run(['params', '--hf-config', llama3Config]);
    expectExit(r, 0, 'params table');
    assert.match(r.stdout, /8[,_ ]?030[,_ ]?261[,_ ]?248|8\.03\s*B/);
  });

  test('--model PRESET gives the same count', () => {
    const r = run(['params', '--model', 'meta-llama/Meta-Llama-3-8B', '--json']);
    expectExit(r, 0, 'params --model');
    assert.equal(parseJson(r.stdout, 'params --model').total, LLAMA3_8B_TOTAL);
  });

  test('a config.json missing a needed field is invalid input (exit 1)', () => {
    const cfg = JSON.parse(fs.readFileSync(llama3Config, 'utf8'));
    delete cfg.hidden_size;
    const r = run(['params', '--hf-config', writeTmp('no-hidden.json', cfg), '--json']);
    expectExit(r, 1, 'params without hidden_size');
    assert.ok(r.all.includes('hidden_size'), `names hidden_size:\n${r.all}`);
  });
});

describe('quick', () => {
  test('quick 7 --gpus 8 --engine deepspeed --json', () => {
    const r = run(['quick', '7', '--gpus', '8', '--engine', 'deepspeed', '--json']);
    expectExit(r, 0, 'quick');
    const res = parseJson(r.stdout, 'quick');
    checkResult(res, 'quick');
    assert.equal(res.parameters.total, 7e9);
    assert.equal(res.scenario.hardware.num_gpus, 8);
    assert.equal(res.scenario.engine.type, 'deepspeed');
  });

  test('quick 70 --gpus 64 --gpu-mem 80 --engine megatron prints a table', () => {
    const r = run(['quick', '70', '--gpus', '64', '--gpu-mem', '80', '--engine', 'megatron']);
    expectExit(r, 0, 'quick table');
    assert.match(r.stdout, /weights/i);
  });

  test('with DeepSpeed, more GPUs means less memory per GPU (ZeRO shards the states)', () => {
    const peak = (n) => {
      const r = run(['quick', '13', '--gpus', String(n), '--engine', 'deepspeed', '--json']);
      expectExit(r, 0, `quick 13 --gpus ${n}`);
      return parseJson(r.stdout, `quick ${n}`).per_gpu.peak_allocated_bytes;
    };
    assert.ok(peak(8) < peak(2));
  });

  test('quick without a size is a usage error (exit 2)', () => {
    expectExit(run(['quick', '--gpus', '8']), 2, 'quick without size');
  });
});

describe('validate', () => {
  test('a good scenario prints "valid" and exits 0', () => {
    const r = run(['validate', writeTmp('good.json', llamaTraining)]);
    expectExit(r, 0, 'validate good');
    assert.equal(r.stdout.split('\n')[0], 'valid', 'the first line says valid (warnings may follow)');
  });

  test('a bad one prints each error message and exits 1', () => {
    const bad = { ...llamaTraining, training: { ...llamaTraining.training, batch_size: -4 }, engine: { type: 'deepspeed', zero_stage: 7 } };
    const r = run(['validate', writeTmp('bad.json', bad)]);
    expectExit(r, 1, 'validate bad');
    assert.ok(r.all.includes('training.batch_size: must be a positive integer, got -4'), `batch_size message:\n${r.all}`);
    assert.ok(r.all.includes('engine.zero_stage'), `zero_stage message:\n${r.all}`);
  });

  test('a missing file exits 1', () => {
    expectExit(run(['validate', path.join(tmp, 'does-not-exist.json')]), 1, 'validate missing');
  });
});

describe('exit codes and error messages', () => {
  test('an invalid field value: exit 1, message names the field, the rule and the value', () => {
    const bad = { ...llamaTraining, training: { ...llamaTraining.training, batch_size: -4 } };
    const r = run(['estimate', '--scenario', writeTmp('neg.json', bad)]);
    expectExit(r, 1, 'batch_size -4');
    assert.ok(r.all.includes('training.batch_size: must be a positive integer, got -4'), `message:\n${r.all}`);
  });

  test('an invalid field with --json: exit 1 and the error document on stdout', () => {
    const bad = { ...llamaTraining, training: { ...llamaTraining.training, batch_size: -4 } };
    const r = run(['estimate', '--scenario', writeTmp('neg.json', bad), '--json']);
    expectExit(r, 1, 'batch_size -4 --json');
    const res = parseJson(r.stdout, 'error document');
    checkErrors(res, 'batch_size -4');
    const e = res.errors.find((x) => x.field === 'training.batch_size');
    assert.ok(e, 'an error for training.batch_size');
    assert.equal(e.value, '-4');
    assert.equal(e.message, 'training.batch_size: must be a positive integer, got -4');
  });

  test('malformed JSON: exit 1', () => {
    const r = run(['estimate', '--scenario', writeTmp('broken.json', '{"model": {"preset": ')]);
    expectExit(r, 1, 'malformed');
    assert.match(r.all, /json/i);
  });

  test('malformed JSON on stdin: exit 1', () => {
    expectExit(run(['estimate', '--scenario', '-'], 'not json at all'), 1, 'malformed stdin');
  });

  test('a missing scenario file: exit 1', () => {
    const missing = path.join(tmp, 'nope.json');
    const r = run(['estimate', '--scenario', missing]);
    expectExit(r, 1, 'missing file');
    assert.ok(r.stderr.includes('nope.json'), `names the file:\n${r.stderr}`);
  });

  test('an unknown model: exit 1, names the model', () => {
    const r = run(['estimate', '--model', 'nobody/no-such-model-13B']);
    expectExit(r, 1, 'unknown model');
    assert.ok(r.all.includes('no-such-model-13B'), `names the model:\n${r.all}`);
  });

  test('an invalid flag value: exit 1, names the field', () => {
    const r = run(['estimate', '--model', 'llama3-8b', '--zero', '5', '--engine', 'deepspeed']);
    expectExit(r, 1, '--zero 5');
    assert.ok(r.all.includes('engine.zero_stage'), `names engine.zero_stage:\n${r.all}`);
    const m = run(['estimate', '--model', 'llama3-8b', '--mode', 'sideways']);
    expectExit(m, 1, '--mode sideways');
    assert.ok(m.all.includes('mode'), `names mode:\n${m.all}`);
  });

  test('deeply nested JSON is invalid input, not a crash', () => {
    const deep = '['.repeat(100000) + ']'.repeat(100000);
    expectExit(run(['estimate', '--scenario', '-'], deep), 1, 'estimate --scenario - (100000 levels)');
    expectExit(run(['validate', writeTmp('deep.json', deep)]), 1, 'validate (100000 levels)');
    const r = run(['estimate', '--jsonl'], deep + '\n');
    expectExit(r, 1, 'estimate --jsonl (100000 levels)');
    assert.equal(parseJson(r.stdout, 'deep jsonl').ok, false);
  });

  // 64 MiB (core/cli/args.h kMaxInputBytes) from any file, stdin or --jsonl record. Each run is
  // under a 1 GiB address-space limit and a 20 s timeout: reading /dev/zero to the end would
  // take either, so passing proves the read stopped at the cap.
  test('input past 64 MiB is refused by size, in bounded time and memory', () => {
    const bounded = (shell) => {
      const r = spawnSync('bash', ['-c', `ulimit -v 1048576; ${shell}`],
        { encoding: 'utf8', timeout: 20_000, env: { ...process.env, GPUMEM: cli } });
      if (r.error) throw r.error;
      return { code: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr, all: r.stdout + r.stderr };
    };
    const limit = /is larger than 64 MiB, the most gpumem reads from one file or stream/;
    for (const [shell, names] of [
      ['"$GPUMEM" params --hf-config /dev/zero', 'config file /dev/zero'],
      ['"$GPUMEM" estimate --hf-config /dev/zero', 'config file /dev/zero'],
      ['"$GPUMEM" estimate --scenario /dev/zero', 'scenario file /dev/zero'],
      ['"$GPUMEM" validate /dev/zero', '/dev/zero'],
      ['"$GPUMEM" estimate --scenario - < /dev/zero', 'standard input'],
      ['"$GPUMEM" maxfit --scenario - < /dev/zero', 'standard input'],
    ]) {
      const r = bounded(shell);
      expectExit(r, 1, shell);
      assert.match(r.stderr, limit, shell);
      assert.ok(r.stderr.includes(names), `${shell}: names ${names}:\n${r.stderr}`);
    }
    const json = bounded('"$GPUMEM" params --hf-config /dev/zero --json');
    expectExit(json, 1, 'params --json /dev/zero');
    assert.match(parseJson(json.stdout, 'params --json').errors[0].message, limit);
    // --jsonl: the lines before the long one are answered, then one error line, then it stops.
    const jsonl = bounded(`{ echo '{"model": {"preset": "llama3-8b"}}'; cat /dev/zero; } | "$GPUMEM" estimate --jsonl`);
    expectExit(jsonl, 1, 'jsonl with an endless record');
    const lines = jsonl.stdout.trim().split('\n').map((l, i) => parseJson(l, `jsonl line ${i + 1}`));
    assert.equal(lines.length, 2);
    assert.equal(lines[0].ok, true);
    assert.match(lines[1].errors[0].message, /a --jsonl record is larger than 64 MiB/);
    // Just under the cap still reads: 64 MiB - 1 bytes of spaces, then a scenario. The JSON
    // parser then refuses it by its own limit (16 MiB, gpumem::kMaxJsonBytes), which it could not
    // have seen had the read stopped.
    const under = bounded(`{ head -c $((64 * 1024 * 1024 - 40)) /dev/zero | tr '\\0' ' '; ` +
      `echo '{"model":{"preset":"llama3-8b"}}'; } | "$GPUMEM" validate -`);
    expectExit(under, 1, 'a scenario padded to just under 64 MiB');
    assert.match(under.stdout, /JSON text of 67108857 bytes is larger than the limit of 16777216 bytes \(16 MiB\)/);
  });

  test('an unknown command: exit 2', () => {
    const r = run(['frobnicate']);
    expectExit(r, 2, 'unknown command');
    assert.ok(r.stderr.length > 0, 'says something on stderr');
  });

  test('no command at all: exit 2', () => {
    expectExit(run([]), 2, 'no command');
  });

  test('an unknown flag: exit 2', () => {
    const r = run(['estimate', '--model', 'llama3-8b', '--frobnicate']);
    expectExit(r, 2, 'unknown flag');
    assert.ok(r.stderr.includes('--frobnicate'), `names the flag:\n${r.stderr}`);
  });

  test('a flag missing its value: exit 2', () => {
    expectExit(run(['estimate', '--model']), 2, '--model without a value');
    expectExit(run(['estimate', '--model', 'llama3-8b', '--batch-size']), 2, '--batch-size without a value');
    expectExit(run(['params', '--hf-config']), 2, '--hf-config without a value');
  });

  test('estimate with nothing naming the model is a usage error (exit 2)', () => {
    const r = run(['estimate', '--batch-size', '2']);
    expectExit(r, 2, 'no model');
    assert.match(r.stderr, /--model|--scenario/);
  });

  test('a scenario without a model is invalid input (exit 1)', () => {
    const r = run(['estimate', '--scenario', '-'], '{"version": 1, "mode": "training"}');
    expectExit(r, 1, 'scenario without model');
    assert.match(r.all, /\bmodel\b/);
  });
});

describe('the command line (CLI11): help, settings tables, one line per mistake', () => {
  const stderrLines = (r) => r.stderr.split('\n').filter((l) => l !== '');

  test('gpumem estimate --help lists each enumerated flag with its table\'s names', () => {
    const r = run(['estimate', '--help']);
    expectExit(r, 0, 'estimate --help');
    assert.match(r.stdout, /gpumem estimate/);
    const settings = parseJson(run(['settings', '--json']).stdout, 'settings --json');
    for (const [flag, field] of [['--optimizer', 'training.optimizer'], ['--dtype', 'training.dtype'],
      ['--kv-cache-dtype', 'inference.kv_cache_dtype'], ['--engine', 'engine.type']]) {
      const line = r.stdout.split('\n').find((l) => l.trimStart().startsWith(`${flag} `));
      assert.ok(line, `${flag} is listed:\n${r.stdout}`);
      for (const v of settings[field].values) assert.ok(line.includes(v.name), `${flag} lists ${v.name}: ${line}`);
      assert.ok(line.includes(`(default ${settings[field].default})`), `${flag} gives its default: ${line}`);
    }
    assert.ok(!r.stdout.includes('--global-batch'), 'plan\'s options are plan\'s');
    const plan = run(['help', 'plan']);
    expectExit(plan, 0, 'help plan');
    assert.match(plan.stdout, /--global-batch/);
  });

  test('a wrong enumerated value: one line naming the flag and the allowed names, exit 1', () => {
    const r = run(['estimate', '--model', 'llama3-8b', '--optimizer', 'adamw_torh']);
    expectExit(r, 1, '--optimizer adamw_torh');
    assert.deepEqual(stderrLines(r), [
      'gpumem: --optimizer: must be one of sgd, sgd_momentum, nesterov, adagrad, rmsprop, adam, adamw, adamw_fused, ' +
      'adafactor, lamb, lion, nadam, radam, amsgrad, sparse_adam, shampoo, adabelief, adamw_8bit, paged_adamw_8bit, ' +
      'paged_adamw_32bit, muon, got "adamw_torh"']);
    assert.equal(r.stdout, '');
    const j = run(['estimate', '--model', 'llama3-8b', '--json', '--dtype', 'int3']);
    expectExit(j, 1, '--dtype int3 --json');
    assert.equal(parseJson(j.stdout, '--dtype int3 --json').errors[0].message, '--dtype: must be one of fp32, fp16, bf16, fp8, got "int3"');
  });

  test('an unknown option: one line naming it, and where the help is; exit 2', () => {
    const r = run(['estimate', '--model', 'llama3-8b', '--seqlen', '4096']);
    expectExit(r, 2, '--seqlen');
    assert.deepEqual(stderrLines(r), ['gpumem: unknown option --seqlen (did you mean --seq-len?)', '(see gpumem estimate --help)']);
    const two = run(['plan', '--model', 'llama3-8b', '--gpus', '8', '--frob', '--nicate']);
    expectExit(two, 2, 'two unknown options');
    assert.deepEqual(stderrLines(two), ['gpumem: unknown option --frob', 'gpumem: unknown option --nicate', '(see gpumem plan --help)']);
  });

  test('an alias is read as the name it stands for', () => {
    const r = run(['estimate', '--model', 'llama3-8b', '--optimizer', 'adamw_torch', '--dtype', 'BFloat16',
      '--attention', 'flash-attention-2', '--json']);
    expectExit(r, 0, 'aliases');
    const t = parseJson(r.stdout, 'aliases').scenario.training;
    assert.equal(t.optimizer, 'adamw');
    assert.equal(t.dtype, 'bf16');
    assert.equal(t.attention, 'flash');
  });

  test('--version prints the version', () => {
    const r = run(['--version']);
    expectExit(r, 0, '--version');
    assert.equal(r.stdout, run(['version']).stdout);
  });
});

// The release binary runs on a bare Debian 12+ / Ubuntu 23.04+ (glibc 2.36): it links only libc,
// libm and libcurl (GPUMEM_PORTABLE_CLI: libstdc++ and libgcc inside it).
test('the CLI needs no shared library but libc, libm and libcurl', (t) => {
  const readelf = spawnSync('readelf', ['-d', cli], { encoding: 'utf8' });
  if (readelf.error) return t.skip(`readelf is not installed (binutils): ${readelf.error.message}`);
  const needed = [...readelf.stdout.matchAll(/\(NEEDED\)\s+Shared library: \[([^\]]+)\]/g)].map((m) => m[1]).sort();
  const allowed = /^(libc\.so\.6|libm\.so\.6|libcurl\.so\.4|ld-linux-x86-64\.so\.2|ld-linux-aarch64\.so\.1)$/;
  assert.ok(needed.length > 0, readelf.stdout);
  assert.deepEqual(needed.filter((n) => !allowed.test(n)), [], `needed: ${needed.join(', ')}`);
});

// What gpumem prints as the scenario (every default filled in, the model as given) is a valid
// scenario that gives the same figures, and reading it again changes nothing.
test('every result\'s own scenario runs again to the same figures', () => {
  const parses = (f) => { try { readScenario(f); return true; } catch { return false; } };
  const files = fs.readdirSync(scenarioDir).filter((f) => f.endsWith('.json') && parses(f)).sort();
  const first = run(['estimate', '--jsonl'], files.map((f) => JSON.stringify(readScenario(f))).join('\n') + '\n');
  const results = first.stdout.split('\n').filter((l) => l !== '').map((l, i) => parseJson(l, files[i]));
  assert.equal(results.length, files.length);
  const ok = results.map((r, i) => [files[i], r]).filter(([, r]) => r.ok);
  assert.ok(ok.length >= 30, `${ok.length} valid scenarios`);
  const again = run(['estimate', '--jsonl'], ok.map(([, r]) => JSON.stringify(r.scenario)).join('\n') + '\n');
  const second = again.stdout.split('\n').filter((l) => l !== '').map((l, i) => parseJson(l, `${ok[i][0]} again`));
  ok.forEach(([name, r], i) => {
    const s = second[i];
    assert.equal(s.ok, true, `${name}: the resolved scenario is valid: ${JSON.stringify(s.errors)}`);
    assert.deepEqual(s.per_gpu, r.per_gpu, `${name}: same per-GPU figures`);
    assert.deepEqual(s.parameters, r.parameters, `${name}: same parameters`);
    assert.deepEqual(s.scenario, r.scenario, `${name}: reading it again changes nothing`);
  });
});

// The serving engines' memory settings as flags: each sets its field, moves the figure it governs, and
// is an error under another engine (it would change nothing).
describe('serving engine flags', () => {
  const llama = ['estimate', '--model', 'llama3-8b', '--mode', 'inference', '--context-len', '8192', '--json'];
  const serving = (args) => {
    const r = run([...llama, ...args]);
    expectExit(r, 0, args.join(' '));
    return parseJson(r.stdout, args.join(' '));
  };
  for (const [engine, flag, field, low, high] of [
    ['vllm', '--gpu-memory-utilization', 'gpu_memory_utilization', 0.6, 0.9],
    ['sglang', '--mem-fraction-static', 'mem_fraction_static', 0.6, 0.85],
    ['tgi', '--cuda-memory-fraction', 'cuda_memory_fraction', 0.6, 1],
    ['tensorrt_llm', '--free-gpu-memory-fraction', 'free_gpu_memory_fraction', 0.6, 0.9],
  ]) {
    test(`${flag} (${engine}): sets inference.${field}; a larger share holds more KV tokens`, () => {
      const a = serving(['--inference-engine', engine, flag, String(low)]);
      const b = serving(['--inference-engine', engine, flag, String(high)]);
      assert.equal(a.scenario.inference[field], low);
      assert.equal(b.scenario.inference[field], high);
      assert.ok(b.serving.kv_cache_tokens > a.serving.kv_cache_tokens, `${a.serving.kv_cache_tokens} -> ${b.serving.kv_cache_tokens}`);
      const other = run([...llama, '--inference-engine', engine === 'vllm' ? 'sglang' : 'vllm', flag, String(low)]);
      expectExit(other, 1, `${flag} under another engine`);
      assert.match(other.stderr, new RegExp(`inference\\.${field}: applies to inference\\.engine ${engine} only`));
    });
  }
  test('the step and block sizes: --max-total-tokens, --max-batch-prefill-tokens, --chunked-prefill-size, --max-num-tokens, --block-size, --ubatch', () => {
    const cases = [
      ['tgi', '--max-total-tokens', 'max_total_tokens', 16384],
      ['tgi', '--max-batch-prefill-tokens', 'max_batch_prefill_tokens', 4096],
      ['sglang', '--chunked-prefill-size', 'chunked_prefill_size', 4096],
      ['tensorrt_llm', '--max-num-tokens', 'max_num_tokens', 4096],
      ['vllm', '--block-size', 'block_size', 32],
      ['llama.cpp', '--ubatch', 'ubatch', 256],
    ];
    for (const [engine, flag, field, value] of cases)
      assert.equal(serving(['--inference-engine', engine, flag, String(value)]).scenario.inference[field], value, flag);
    // TGI refuses a context above max_total_tokens; so does the estimate, naming both.
    const r = run([...llama, '--inference-engine', 'tgi', '--max-total-tokens', '4096']);
    expectExit(r, 1, 'context above max_total_tokens');
    assert.match(r.stderr, /context_len: must be at most inference\.max_total_tokens \(4096\)/);
  });
});

// estimate --explain: after the table, each component at the peak as the sum of its figures, each
// figure with this scenario's numbers and its source; the same figures as the JSON's "explain".
describe('estimate --explain', () => {
  const args = ['estimate', '--model', 'llama3-8b', '--precision', 'pure', '--dtype', 'bf16'];
  test('each component at the peak, its figures with the numbers, and the phases', () => {
    const r = run([...args, '--explain']);
    expectExit(r, 0, '--explain');
    const j = parseJson(run([...args, '--json', '--explain']).stdout, '--json --explain');
    assert.equal(parseJson(run([...args, '--json']).stdout, '--json').explain, undefined, 'only when asked');
    const text = r.stdout;
    assert.ok(text.includes(`why each figure is what it is (the peak: ${j.per_gpu.peak_phase})`), text);
    // Every component the table shows has its line, with the same GiB the JSON gives.
    for (const [name, bytes] of Object.entries(j.per_gpu.components)) {
      if (bytes === 0) continue;
      const gib = (bytes / 2 ** 30).toFixed(2);
      const terms = j.explain.peak[name].map((t) => t.figure).join(' + ');
      assert.ok(text.includes(`\n${name} ${gib} GiB = ${terms}\n`), `${name} ${gib} GiB = ${terms}\n${text}`);
    }
    // The weights: 8,030,261,248 parameters x 2 bytes (bf16, pure recipe) = 14.96 GiB.
    assert.match(text, /weights = 14\.96 GiB: the model's parameters on this GPU\n\s+parameters on this GPU × bytes per weight\n\s+= 8,030,261,248 params × 2 B\n\s+source: /);
    for (const phase of j.per_gpu.timeline) assert.ok(text.includes(`  ${phase.phase}: `), phase.phase);
    // Without --explain the table stands alone.
    assert.ok(!run(args).stdout.includes('why each figure'));
  });
  test('inference engines and the overheads have theirs too', () => {
    const r = run(['estimate', '--model', 'llama3-8b', '--mode', 'inference', '--inference-engine', 'vllm', '--explain']);
    expectExit(r, 0, 'vllm --explain');
    assert.match(r.stdout, /kv_cache \d+\.\d\d GiB = kv_cache\n\s+kv_cache = [\d.]+ GiB: vLLM's KV blocks/);
    assert.match(r.stdout, /requested memory - weights - profile peak - non-torch increase/);
    assert.match(r.stdout, /vllm_requested_memory = [\d.]+ GiB: what vLLM requests: gpu_memory_utilization x the CUDA total/);
    assert.match(r.stdout, /profile_sampler = [\d.]+ GiB: the dummy sampler run's peak/);
    assert.match(r.stdout, /overheads [\d.]+ GiB = allocator_slack \+ engine_claim_rest/);
  });
});
