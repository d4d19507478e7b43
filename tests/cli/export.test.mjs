// `gpumem export FORMAT`: every exporter's output checked with its target's own rules, read from
// that project's source at the version tests/data/formats/<format>.json names (its "source"): JSON
// that parses with the keys DeepSpeed accepts, YAML that loads (Python's yaml, Debian's
// python3-yaml) with the keys accelerate and axolotl accept, and command lines whose every flag and
// value the engine's CLI has. The estimate each export carries is the one `estimate` gives.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const cli = process.env.GPUMEM_CLI || join(root, 'build/native/core/cli/gpumem');
const rules = (name) => JSON.parse(readFileSync(join(root, 'tests/data/formats', `${name}.json`), 'utf8'));

function run(args) {
  const r = spawnSync(cli, args, { encoding: 'utf8' });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

function exported(format, args) {
  const r = run(['export', format, ...args]);
  assert.equal(r.code, 0, `gpumem export ${format} ${args.join(' ')}\n${r.err}`);
  return r.out;
}

function yamlLoad(text) {
  const r = spawnSync('python3', ['-c', 'import sys, json, yaml; print(json.dumps(yaml.safe_load(sys.stdin.read())))'],
    { input: text, encoding: 'utf8' });
  assert.equal(r.status, 0, `YAML did not load:\n${text}\n${r.stderr}`);
  return JSON.parse(r.stdout);
}

// A command line's words, with the shell's single quotes and line continuations undone.
function words(text) {
  const out = [];
  const re = /'((?:[^']|'\\'')*)'|(\S+)/g;
  for (const line of text.replace(/\\\n/g, ' ').split('\n')) {
    if (/^#/.test(line)) continue;  // a comment line, as the shell reads it (an export that does not fit says so)
    for (const m of line.matchAll(re)) {
      if (m[1] !== undefined) out.push(m[1].replace(/'\\''/g, "'"));
      else if (m[2] !== '\\') out.push(m[2]);
    }
  }
  return out;
}

// [flag, value | null] pairs of the words after `start`: a value is a word that is not a flag.
function flags(ws, start = 0) {
  const out = [];
  for (let i = start; i < ws.length; i++) {
    if (!ws[i].startsWith('-')) continue;
    const value = i + 1 < ws.length && !ws[i + 1].startsWith('-') ? ws[i + 1] : null;
    out.push([ws[i], value]);
  }
  return out;
}

const llama8b = ['--model', 'meta-llama/Llama-3.1-8B'];
const training = {
  single: [...llama8b],
  zero3: [...llama8b, '--engine', 'deepspeed', '--zero', '3', '--offload-optimizer', 'cpu', '--dp', '8', '--num-gpus', '8',
    '--batch-size', '2', '--grad-accum', '4'],
  zero2Fp16: [...llama8b, '--engine', 'deepspeed', '--zero', '2', '--dtype', 'fp16', '--dp', '4', '--num-gpus', '4'],
  fsdp16: [...llama8b, '--engine', 'fsdp', '--dp', '16', '--num-gpus', '16', '--activation-checkpointing', 'full'],
  fsdpOffload: [...llama8b, '--engine', 'fsdp', '--offload-optimizer', 'cpu', '--offload-param', 'cpu', '--dp', '4',
    '--num-gpus', '4', '--optimizer', 'adamw_8bit'],
  lora: [...llama8b, '--lora', '--lora-targets', 'q_proj,k_proj,v_proj,o_proj', '--loss', 'chunked'],
  qlora: ['--model', 'mistralai/Mistral-7B-v0.1', '--qlora', '--lora-targets', 'all_linear', '--attention', 'flash'],
};

test('deepspeed: the JSON parses and every key is one DeepSpeed reads', () => {
  const ds = rules('deepspeed');
  for (const args of [training.zero3, training.zero2Fp16]) {
    const config = JSON.parse(exported('deepspeed', args));
    for (const key of Object.keys(config)) assert.ok(ds.top_level.includes(key), `top-level ${key}`);
    const walk = (obj, path) => {
      for (const [k, v] of Object.entries(obj)) {
        if (path) assert.ok(ds.sections[path]?.includes(k), `${path}.${k} is not a DeepSpeed key`);
        if (v && typeof v === 'object' && !Array.isArray(v)) walk(v, path ? `${path}.${k}` : k);
      }
    };
    walk(config, '');
    assert.ok(ds.enums['zero_optimization.stage'].includes(config.zero_optimization.stage));
    const device = config.zero_optimization.offload_optimizer?.device;
    if (device) assert.ok(ds.enums['zero_optimization.offload_optimizer.device'].includes(device));
  }
});

test('accelerate: the YAML loads, and its keys and values are accelerate\'s', () => {
  const acc = rules('accelerate');
  for (const args of [training.single, training.fsdp16, training.fsdpOffload, training.zero3]) {
    const y = yamlLoad(exported('accelerate', args));
    for (const key of Object.keys(y)) assert.ok([...acc.top_level_base, ...acc.top_level].includes(key), `top-level ${key}`);
    assert.ok(acc.enums.distributed_type.includes(y.distributed_type), y.distributed_type);
    assert.ok(acc.enums.mixed_precision.includes(y.mixed_precision), y.mixed_precision);
    for (const section of ['fsdp_config', 'deepspeed_config']) {
      for (const key of Object.keys(y[section] ?? {})) assert.ok(acc.sections[section].includes(key), `${section}.${key}`);
    }
    if (y.fsdp_config) {
      assert.ok(acc.enums['fsdp_config.fsdp_sharding_strategy'].includes(y.fsdp_config.fsdp_sharding_strategy));
      assert.ok(acc.enums['fsdp_config.fsdp_auto_wrap_policy'].includes(y.fsdp_config.fsdp_auto_wrap_policy));
      assert.ok(acc.enums['fsdp_config.fsdp_backward_prefetch'].includes(y.fsdp_config.fsdp_backward_prefetch));
      assert.ok(acc.enums['fsdp_config.fsdp_state_dict_type'].includes(y.fsdp_config.fsdp_state_dict_type));
    }
    if (y.deepspeed_config) {
      assert.ok(acc.enums['deepspeed_config.zero_stage'].map(String).includes(String(y.deepspeed_config.zero_stage)));
      assert.ok(acc.enums['deepspeed_config.offload_optimizer_device'].includes(y.deepspeed_config.offload_optimizer_device));
    }
  }
});

test('torchrun: torchrun\'s flags before the script, HF TrainingArguments after it', () => {
  const tr = rules('torchrun');
  // The script's own arguments: transformers' example scripts (run_clm.py) read the model from
  // their ModelArguments, beside TrainingArguments.
  // TRL's `trl sft` flags, which the export writes for the sequence length, LoRA and the quantized base:
  // SFTConfig.max_length (trl/trainer/sft_config.py) and ModelConfig's fields (trl/trainer/model_config.py).
  const scriptArguments = ['model_name_or_path', 'max_length', 'use_peft', 'lora_r', 'lora_alpha', 'lora_dropout',
    'lora_target_modules', 'load_in_4bit', 'load_in_8bit', 'bnb_4bit_quant_type', 'use_bnb_nested_quant', 'torch_dtype',
    'attn_implementation'];
  for (const args of [training.single, training.fsdp16, training.fsdpOffload, training.zero3, training.qlora]) {
    const ws = words(exported('torchrun', args));
    assert.equal(ws[0], 'torchrun');
    const script = ws.indexOf('train.py');
    assert.ok(script > 0, ws.join(' '));
    for (const [flag] of flags(ws.slice(0, script), 1)) assert.ok(tr.torchrun_flags.includes(flag), `torchrun ${flag}`);
    for (const [flag, value] of flags(ws, script + 1)) {
      const field = flag.replace(/^--/, '');
      assert.ok(tr.training_arguments.includes(field) || scriptArguments.includes(field), `TrainingArguments has no ${field}`);
      if (field === 'optim') assert.ok(tr.optim_values.includes(value), `optim ${value}`);
      if (field === 'fsdp') for (const w of value.split(' ')) assert.ok(tr.fsdp_options.includes(w), `fsdp ${w}`);
    }
  }
});

test('torchtune: a real recipe and config of that recipe, and overrides its configs have', () => {
  const tt = rules('torchtune');
  const keys = new Set(tt.override_keys);
  for (const args of [training.single, training.lora, training.fsdp16,
    ['--model', 'meta-llama/Llama-3.3-70B-Instruct', '--qlora', '--engine', 'fsdp', '--dp', '8', '--num-gpus', '8']]) {
    const ws = words(exported('torchtune', args));
    assert.deepEqual(ws.slice(0, 2), ['tune', 'run']);
    const recipe = ws[ws.indexOf('--config') - 1];  // tune run [torchrun flags] RECIPE --config CONFIG
    assert.ok(tt.recipes[recipe], `recipe ${recipe}`);
    const config = ws[ws.indexOf('--config') + 1];
    assert.ok(tt.recipes[recipe].includes(config), `${recipe} has no config ${config}`);
    for (const w of ws.filter((x) => x.includes('='))) {
      const key = w.slice(0, w.indexOf('='));
      assert.ok(keys.has(key), `override ${key} is not a key of torchtune's configs`);
    }
    const dtype = ws.find((w) => w.startsWith('dtype='));
    assert.ok(tt.dtype_values_finetune_supported.includes(dtype.slice(6)), dtype);
  }
});

test('torchtune: a model it ships no config for gets a CONFIG placeholder and a note saying so', () => {
  const r = run(['export', 'torchtune', '--model', 'meta-llama/Llama-3.1-70B', '--qlora', '--engine', 'fsdp', '--dp', '8',
    '--num-gpus', '8']);
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /--config CONFIG/);
  assert.match(r.err, /torchtune 0\.6\.1 ships no lora_finetune_distributed config for meta-llama\/Llama-3\.1-70B/);
});

test('axolotl: the YAML loads and every key and value is axolotl\'s', () => {
  const ax = rules('axolotl');
  for (const args of [training.single, training.qlora, training.lora.filter((a) => a !== '--loss' && a !== 'chunked'),
    training.fsdp16]) {
    const y = yamlLoad(exported('axolotl', args));
    for (const key of Object.keys(y)) assert.ok(ax.keys.includes(key), `axolotl has no key ${key}`);
    for (const key of Object.keys(y.fsdp_config ?? {})) assert.ok(ax.sections.fsdp_config.includes(key), `fsdp_config.${key}`);
    if (y.adapter) assert.ok(ax.enums.adapter.includes(y.adapter), y.adapter);
    assert.ok(ax.enums.optimizer.includes(y.optimizer) || ax.enums.optimizer_custom.includes(y.optimizer), y.optimizer);
    assert.ok(ax.enums.attn_implementation.includes(y.attn_implementation), y.attn_implementation);
  }
});

test('litgpt: the command and each flag and value are litgpt\'s', () => {
  const lg = rules('litgpt');
  for (const args of [['--model', 'google/gemma-2b', '--lora'], ['--model', 'google/gemma-2b', '--qlora'],
    ['--model', 'google/gemma-2b', '--engine', 'fsdp', '--dp', '4', '--num-gpus', '4']]) {
    const ws = words(exported('litgpt', args));
    assert.equal(ws[0], 'litgpt');
    const allowed = lg.commands[ws[1]];
    assert.ok(allowed, `litgpt command ${ws[1]}`);
    for (const [flag, value] of flags(ws, 3)) {
      assert.ok(allowed.includes(flag), `litgpt ${ws[1]} has no ${flag}`);
      if (flag === '--precision') assert.ok(lg.enums.precision.includes(value), value);
      if (flag === '--quantize') assert.ok(lg.enums.quantize_finetune.includes(value), value);
    }
  }
});

test('vllm: every flag of `vllm serve` exists and takes the value written', () => {
  const v = rules('vllm');
  for (const args of [[...llama8b], [...llama8b, '--kv-cache-dtype', 'fp8', '--batch-size', '64'],
    ['--model', 'meta-llama/Llama-3.1-70B', '--tp', '4', '--num-gpus', '4', '--weight-format', 'fp8']]) {
    const ws = words(exported('vllm', ['--mode', 'inference', ...args]));
    assert.deepEqual(ws.slice(0, 2), ['vllm', 'serve']);
    for (const [flag, value] of flags(ws, 3)) {
      assert.ok(v.flags.includes(flag), `vllm serve has no ${flag}`);
      if (v.enums[flag]) assert.ok(v.enums[flag].map(String).includes(value), `${flag} ${value}`);
    }
  }
});

test('vllm and sglang: data and expert parallelism are written, with flags the engines have', () => {
  const moe = ['--mode', 'inference', '--model', 'mistralai/Mixtral-8x7B-v0.1', '--dp', '8', '--ep', '8', '--num-gpus', '8'];
  const v = words(exported('vllm', moe));
  const vf = rules('vllm').flags;
  for (const [flag] of flags(v, 3)) assert.ok(vf.includes(flag), `vllm serve has no ${flag}`);
  assert.equal(v[v.indexOf('--data-parallel-size') + 1], '8');
  assert.ok(v.includes('--enable-expert-parallel'));
  const s = words(exported('sglang', moe));
  const sf = rules('sglang').flags;
  for (const [flag] of flags(s, 3)) assert.ok(sf.includes(flag), `sglang has no ${flag}`);
  for (const [flag, value] of [['--tp-size', '8'], ['--dp-size', '8'], ['--ep-size', '8']])
    assert.equal(s[s.indexOf(flag) + 1], value, flag);
  assert.ok(s.includes('--enable-dp-attention'));
  // An alias is written as the model's Hub id.
  const a = words(exported('vllm', ['--mode', 'inference', '--model', 'llama3.1-8b']));
  assert.match(a[2], /^meta-llama\//);
});

test('llama.cpp: every flag of llama-server exists and takes the value written', () => {
  const l = rules('llama_cpp');
  for (const args of [['--weight-format', 'q4_k_m', '--context-len', '8192', '--batch-size', '4'],
    ['--weight-format', 'q8_0', '--kv-cache-dtype', 'int8'], ['--weight-format', 'bf16', '--gpu-layers', '20']]) {
    const ws = words(exported('llama.cpp', ['--mode', 'inference', ...llama8b, ...args]));
    assert.equal(ws[0], 'llama-server');
    for (const [flag, value] of flags(ws, 1)) {
      assert.ok(l.flags.includes(flag), `llama-server has no ${flag}`);
      if (l.enums[flag]) assert.ok(l.enums[flag].includes(value), `${flag} ${value}`);
    }
  }
});

// SGLang, TGI and TensorRT-LLM: every flag exists (tests/data/formats/<format>.json) and takes an
// allowed value, and the memory flags carry the values the estimate rests on.
const servingFormats = [
  ['sglang', 3, (ws) => ws.slice(0, 3), ['python', '-m', 'sglang.launch_server'], (r) => r.flags],
  ['tgi', 1, (ws) => ws.slice(0, 1), ['text-generation-launcher'], (r) => r.flags],
  ['tensorrt_llm', 2, (ws) => ws.slice(0, 1), ['trtllm-serve'], (r) => r.trtllm_serve_flags],
];
for (const [format, start, head, expected, known] of servingFormats) {
  test(`${format}: every flag exists and takes the value written`, () => {
    const rule = rules(format);
    for (const args of [[...llama8b], [...llama8b, '--kv-cache-dtype', 'fp8', '--batch-size', '64'],
      ['--model', 'meta-llama/Llama-3.1-70B', '--tp', '4', '--num-gpus', '4', '--weight-format', 'fp8']]) {
      const ws = words(exported(format, ['--mode', 'inference', ...args]));
      assert.deepEqual(head(ws), expected);
      for (const [flag, value] of flags(ws, start)) {
        assert.ok(known(rule).includes(flag), `${format} has no ${flag}`);
        if (rule.enums[flag]) assert.ok(rule.enums[flag].map(String).includes(value), `${flag} ${value}`);
      }
    }
  });
}

test('sglang, tgi and tensorrt_llm: the memory flags are the estimate\'s settings', () => {
  const value = (ws, flag) => ws[ws.indexOf(flag) + 1];
  const tp = ['--model', 'meta-llama/Llama-3.1-70B', '--tp', '4', '--num-gpus', '4', '--context-len', '8192',
    '--batch-size', '16'];
  const doc = (format) => JSON.parse(run(['export', format, '--mode', 'inference', ...tp, '--json']).out);
  const sg = doc('sglang');
  const sw = words(sg.text);
  assert.equal(Number(value(sw, '--mem-fraction-static')), sg.scenario.inference.mem_fraction_static);
  assert.equal(value(sw, '--context-length'), '8192');
  assert.equal(value(sw, '--max-running-requests'), '16');
  assert.equal(value(sw, '--tp-size'), '4');
  assert.equal(sg.estimate.serving.engine, 'sglang');
  const tg = doc('tgi');
  const tw = words(tg.text);
  assert.equal(Number(value(tw, '--max-total-tokens')), tg.scenario.inference.max_total_tokens);
  assert.equal(Number(value(tw, '--max-batch-prefill-tokens')), tg.scenario.inference.max_batch_prefill_tokens);
  assert.equal(Number(value(tw, '--cuda-memory-fraction')), 1);
  assert.equal(value(tw, '--num-shard'), '4');
  const tr = doc('tensorrt_llm');
  const rw = words(tr.text);
  assert.equal(Number(value(rw, '--kv_cache_free_gpu_memory_fraction')), 0.9);
  assert.equal(value(rw, '--max_batch_size'), '16');
  assert.equal(value(rw, '--max_num_tokens'), '8192');
  assert.equal(value(rw, '--max_seq_len'), '8192');
  assert.equal(value(rw, '--tp_size'), '4');
  assert.equal(tr.file_name, 'trtllm_serve.sh');
  // An engine set to another one is refused, naming the field.
  const bad = run(['export', 'tgi', '--mode', 'inference', ...llama8b, '--inference-engine', 'vllm']);
  assert.equal(bad.code, 1);
  assert.match(bad.err, /inference\.engine/);
});

test('export --json carries the estimate, equal to estimate\'s own', () => {
  const r = run(['export', 'vllm', '--mode', 'inference', ...llama8b, '--json']);
  assert.equal(r.code, 0, r.err);
  const doc = JSON.parse(r.out);
  const e = JSON.parse(run(['estimate', '--mode', 'inference', '--inference-engine', 'vllm', ...llama8b, '--json']).out);
  assert.equal(doc.estimate.per_gpu.device_total_bytes, e.per_gpu.device_total_bytes);
  assert.equal(doc.file_name, 'vllm_serve.sh');
});

test('a format that cannot express a setting is one error line naming the field', () => {
  const r = run(['export', 'deepspeed', ...llama8b, '--engine', 'fsdp']);
  assert.equal(r.code, 1);
  assert.match(r.err, /engine\.type/);
  const bad = run(['export', 'slurm', ...llama8b]);
  assert.notEqual(bad.code, 0);
  assert.match(bad.err, /deepspeed, accelerate, torchrun, torchtune, axolotl, litgpt, vllm, llama\.cpp/);
});

test('estimate --deepspeed reads a DeepSpeed JSON into the scenario', () => {
  const config = exported('deepspeed', training.zero3);
  const r = spawnSync('sh', ['-c', `"${cli}" estimate --model meta-llama/Llama-3.1-8B --num-gpus 8 --deepspeed - --json`],
    { input: config, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const back = JSON.parse(r.stdout);
  const direct = JSON.parse(run(['estimate', ...training.zero3, '--json']).out);
  assert.equal(back.per_gpu.device_total_bytes, direct.per_gpu.device_total_bytes);
  assert.equal(back.scenario.engine.zero_stage, 3);
});

test('litgpt\'s note quotes the model in `litgpt download MODEL` as the command quotes it', async () => {
  const { mkdtempSync, writeFileSync, rmSync, mkdirSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const base = mkdtempSync(join(tmpdir(), 'gpumem-litgpt-'));
  const folder = join(base, "my model; echo 'x'");
  mkdirSync(folder);
  const preset = JSON.parse(readFileSync(join(root, 'presets/models/google__gemma-2b.json'), 'utf8'));
  writeFileSync(join(folder, 'config.json'), JSON.stringify(preset.config));
  const r = run(['export', 'litgpt', '--model', folder, '--lora']);
  rmSync(base, { recursive: true, force: true });
  assert.equal(r.code, 0, r.err);
  const command = r.err.match(/`(litgpt download [^`]*)`/);
  assert.ok(command, r.err);
  assert.deepEqual(words(command[1]), ['litgpt', 'download', folder], 'one word, the folder, as the shell reads it');
  assert.equal(words(r.out)[2], folder, 'the same quoting as the command itself');
});
