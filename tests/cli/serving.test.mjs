// The serving figures against vLLM's start-up log may not get worse: the KV pool's, the rest of the
// budget's and the weights' median and p90 absolute error, and the number of unanswered cases, against
// tests/bench/serving_baseline.json. Estimates are deterministic, so this is no timed test: a change
// that moves a figure past its record fails here, naming it; one that improves a figure passes and
// says how to record it.
//
//   GPUMEM_CLI=build/native/core/cli/gpumem node --test tests/cli/serving.test.mjs
//   node tests/bench/serving.mjs      (the figures, case by case)
import { test } from 'node:test';
import { spawnSync } from 'node:child_process';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { root } from '../bench/cases.mjs';
import { servingFigures } from '../bench/serving_figures.mjs';

const cli = process.env.GPUMEM_CLI || join(root, 'build/native/core/cli/gpumem');
const baseline = JSON.parse(readFileSync(join(root, 'tests/bench/serving_baseline.json'), 'utf8'));
const SAME = 0.05;  // the record has one decimal

function regressions(summary, rec) {
  const out = [];
  if (summary.n < rec.n) out.push(`${summary.n} cases, recorded ${rec.n} (a case left the set)`);
  if (summary.unanswered > rec.unanswered) out.push(`${summary.unanswered} unanswered, recorded ${rec.unanswered}`);
  if (rec.verdicts != null && summary.verdicts < rec.verdicts)
    out.push(`${summary.verdicts} verdicts as vLLM's, recorded ${rec.verdicts}`);
  for (const [name, r] of Object.entries(rec.figures))
    for (const k of ['median', 'p90'])
      if (!(summary[name][k] <= r[k] + SAME)) out.push(`${name} ${k} ${summary[name][k].toFixed(2)} %, recorded ${r[k]} %`);
  return out;
}

test('the comparison finds a serving figure or unanswered count that got worse', () => {
  const rec = { n: 11, unanswered: 1, figures: { kv: { median: 3.0, p90: 9.0 } } };
  const now = (kv, unanswered = 1, n = 11) => ({ n, unanswered, kv });
  assert.deepEqual(regressions(now({ median: 3.04, p90: 9.0 }), rec), []);
  assert.equal(regressions(now({ median: 3.1, p90: 9.0 }), rec).length, 1);
  assert.equal(regressions(now({ median: 3.0, p90: 9.2 }), rec).length, 1);
  assert.equal(regressions(now({ median: 3.0, p90: 9.0 }, 2), rec).length, 1);
  assert.equal(regressions(now({ median: 3.0, p90: 9.0 }, 1, 10), rec).length, 1);
  assert.equal(regressions(now({ median: NaN, p90: 9.0 }), rec).length, 1);
  assert.equal(regressions({ ...now({ median: 3.0, p90: 9.0 }), verdicts: 7 }, { ...rec, verdicts: 8 }).length, 1);
});

test('the serving figures are no worse than recorded (KV pool, rest of the budget, weights; unanswered)', () => {
  const { summary } = servingFigures(cli);
  const worse = regressions(summary, baseline);
  const now = { n: summary.n, unanswered: summary.unanswered, verdicts: summary.verdicts, figures: Object.fromEntries(Object.keys(baseline.figures)
    .map((k) => [k, { median: Number(summary[k].median.toFixed(1)), p90: Number(summary[k].p90.toFixed(1)) }])) };
  assert.deepEqual(worse, [], `worse than recorded:\n  ${worse.join('\n  ')}\nnow: ${JSON.stringify(now)}`);
  const better = Object.keys(baseline.figures).filter((k) => summary[k].median < baseline.figures[k].median - SAME ||
    summary[k].p90 < baseline.figures[k].p90 - SAME);
  if (better.length || summary.unanswered < baseline.unanswered || summary.verdicts > (baseline.verdicts ?? 0))
    console.log(`better than recorded: record it in tests/bench/serving_baseline.json: ${JSON.stringify(now)}`);
});

// What the user reads: the pool's tokens and the concurrent sequences at the context asked, and, when
// the pool holds less than one sequence, vLLM's verdict with a pointer to `gpumem fit`.
test('estimate prints the serving capacity and vLLM\'s verdict when one sequence does not fit', () => {
  const args = ['estimate', '--model', 'Qwen/Qwen3-32B', '--mode', 'inference', '--inference-engine', 'vllm'];
  const ok = spawnSync(cli, [...args, '--context-len', '16000'], { encoding: 'utf8' });
  assert.equal(ok.status, 0, ok.stderr);
  assert.match(ok.stdout, /^fits: yes: 1 of 1 sequences of 16,000 tokens fit \(KV pool [\d.]+ GiB per GPU = [\d,]+ tokens\); vllm claims [\d.]+% of the card/m);
  const long = spawnSync(cli, [...args, '--context-len', '32000'], { encoding: 'utf8' });
  assert.match(long.stdout, /^fits: NO: 0 of 1 sequences of 32,000 tokens fit/m);
  assert.match(long.stdout, /vLLM would not start: one sequence of max_model_len 32000 tokens needs [\d.]+ GiB of KV cache.*longest it could serve is about \d+ tokens.*`gpumem fit`/);
  // The release family: FlashInfer's sampler (0.11.0) leaves more for the pool than the sort (0.12).
  const pool = (v) => JSON.parse(spawnSync(cli, [...args, '--engine-version', v, '--json'], { encoding: 'utf8' }).stdout)
    .serving.kv_cache_bytes;
  assert.ok(pool('0.11.0') > pool('0.12'));
  // A bare 0.8 or 0.9 ran V1 by default, which gpumem does not follow at those releases: refused, with
  // the V0 spelling named.
  for (const v of ['0.7', '0.6.6', '1.0', 'latest', '0.9', '0.8.5', '0.7-v0', '0.10-v0']) {
    const bad = spawnSync(cli, [...args, '--engine-version', v], { encoding: 'utf8' });
    assert.notEqual(bad.status, 0, v);
    assert.match(bad.stdout + bad.stderr, /inference\.engine_version.*from 0\.10 on.*"0\.8-v0" \/ "0\.9\.2-v0" for the V0 engine/s, v);
  }
});

// vLLM 0.8 and 0.9's V0 engine (VLLM_USE_V1=0), spelled "0.9-v0": V0's step defaults (256 sequences;
// max(max_model_len, 2048) tokens without chunked prefill), said in a warning and in --explain.
test('engine_version 0.8-v0 and 0.9-v0 estimate vLLM\'s V0 engine with its defaults', () => {
  const args = ['estimate', '--model', 'meta-llama/Llama-3.1-8B', '--mode', 'inference', '--inference-engine', 'vllm',
    '--context-len', '8192'];
  for (const v of ['0.8-v0', '0.8.5-v0', '0.9-v0', '0.9.2-v0']) {
    const run = spawnSync(cli, [...args, '--engine-version', v, '--json'], { encoding: 'utf8' });
    assert.equal(run.status, 0, run.stderr);
    const r = JSON.parse(run.stdout);
    assert.equal(r.scenario.inference.engine_version, v);
    assert.equal(r.scenario.inference.max_num_seqs, 256, v);
    assert.equal(r.scenario.inference.max_num_batched_tokens, 8192, v);
    assert.ok(r.warnings.some((w) => /the V0 engine \(VLLM_USE_V1=0\)/.test(w)), v);
  }
  const explained = spawnSync(cli, [...args, '--engine-version', '0.9-v0', '--explain'], { encoding: 'utf8' });
  assert.equal(explained.status, 0, explained.stderr);
  assert.match(explained.stdout, /V0 sampler/);
  assert.match(explained.stdout, /vllm\/model_executor\/layers\/sampler\.py/);
});

// Issue #30: vLLM serving Llama 3.1 70B to 32 users at 8k context on two H100s. Two GPUs for serving are one
// tensor-parallel server, said in words; the verdict is about the sequences the KV pool holds, not the budget
// the engine fills; the training engine's defaults and warnings stay out; fit's rows differ by the pool.
const issue = ['--model', 'meta-llama/Llama-3.1-70B-Instruct', '--mode', 'inference', '--inference-engine', 'vllm',
  '--gpu', 'H100-80GB', '--gpus', '2', '--batch-size', '32', '--context-len', '8192'];

test('a serving estimate on two GPUs is one tensor-parallel server, judged by the sequences its pool holds', () => {
  const r = spawnSync(cli, ['estimate', ...issue], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^2 x H100-80GB \| dp 1 tp 2 pp 1: one vllm server split over 2 GPUs \(tensor parallel 2\)$/m);
  assert.match(r.stdout, /^fits: NO: \d+ of 32 sequences of 8,192 tokens fit \(KV pool [\d.]+ GiB per GPU = [\d,]+ tokens\); vllm claims [\d.]+% of the card, GPUs needed: 4$/m);
  assert.match(r.stdout, /parallelism\.tensor_parallel_size = 2 \(num_gpus 2: one vllm server/);
  // The training engine is the training's: not printed, not defaulted, not warned about.
  assert.doesNotMatch(r.stdout, /engine (ddp|none)/);
  assert.doesNotMatch(r.stdout, /engine\.type/);
  assert.doesNotMatch(r.stdout, /Megatron way/);
  // Reserved is never above the device total.
  const j = JSON.parse(spawnSync(cli, ['estimate', ...issue, '--json'], { encoding: 'utf8' }).stdout);
  assert.ok(j.per_gpu.peak_reserved_bytes <= j.per_gpu.device_total_bytes);
  assert.equal(j.serving.requested_sequences, 32);
  assert.equal(j.serving.fills_budget, true);
  // Training still names its engine.
  const t = spawnSync(cli, ['estimate', '--model', 'meta-llama/Llama-3.1-8B', '--gpus', '2'], { encoding: 'utf8' });
  assert.match(t.stdout, /^2 x H100-80GB \| engine ddp \| dp 2 tp 1 pp 1: 2 data-parallel ranks, one GPU each$/m);
});

test('fit compares a budget-filling engine\'s runs by sequences and tokens in the pool', () => {
  const r = spawnSync(cli, ['fit', ...issue], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /does not fit: \d+ of 32 sequences of 8,192 tokens fit \(KV pool [\d.]+ GiB per GPU = [\d,]+ tokens\), claiming [\d.]+ GiB of [\d.]+ GiB per GPU/);
  const rows = r.stdout.split('\n').filter((l) => /^ {5}\S/.test(l));
  assert.ok(rows.length >= 2, r.stdout);
  for (const row of rows) assert.match(row, /^ {5}(\d+) of (\d+) sequences of [\d,]+ tokens fit(, room for \d+)? \(KV pool [\d.]+ GiB per GPU = [\d,]+ tokens\), claiming /);
  // Every row holds the sequences it asks for (a row may ask for fewer, or shorter ones).
  for (const row of rows) {
    const [, held, asked] = row.match(/^ {5}(\d+) of (\d+)/);
    assert.ok(Number(held) >= Number(asked), row);
  }
});

test('fit offers a server\'s own settings for data: fewer sequences of the asked context, or, where none fits, the longest context the pool holds', () => {
  // 70B on two H100s: not one 8k sequence fits, so fewer sequences cannot help; shrinking all 32 to fit at once
  // ("context 80") is no setting of a server. The longest context the pool holds, one sequence at a time, is.
  const r = spawnSync(cli, ['fit', ...issue, '--json'], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const j = JSON.parse(r.stdout);
  assert.equal(j.serving.max_concurrent_sequences, 0);
  const data = j.suggestions.filter((x) => x.tier === 'data');
  assert.deepEqual(data.map((x) => x.change), [`context ${j.serving.kv_cache_tokens}, one sequence at a time`]);
  assert.deepEqual(data[0].set, { 'inference.context_len': j.serving.kv_cache_tokens, 'inference.batch_size': 1 });
  assert.equal(data[0].serving.max_concurrent_sequences, 1);
  // Four H100s and 64 asked: 53 of 8k fit, so the data tier is 53 sequences at the asked context.
  const four = spawnSync(cli, ['fit', ...issue.slice(0, -6), '--gpus', '4', '--batch-size', '64', '--context-len', '8192', '--json'],
    { encoding: 'utf8' });
  assert.equal(four.status, 0, four.stderr);
  const k = JSON.parse(four.stdout);
  const held = k.serving.max_concurrent_sequences;
  assert.ok(held > 0 && held < 64, `${held}`);
  assert.deepEqual(k.suggestions.filter((x) => x.tier === 'data').map((x) => x.change), [`concurrent sequences: ${held}`]);
});

test('check judges a budget-filling engine by its sequences, never by the budget it fills', () => {
  const ok = spawnSync(cli, ['check', '--gpu', 'H100-80GB', '--', 'vllm', 'serve', 'meta-llama/Llama-3.1-8B', '--max-num-seqs', '32',
    '--max-model-len', '8192'], { encoding: 'utf8' });
  assert.equal(ok.status, 0, ok.stderr);
  // What was asked fits, and the room beyond it is said as room: never "51 of 32".
  assert.match(ok.stdout, /^fits: 32 of 32 sequences of 8,192 tokens fit, room for \d+ \(KV pool [\d.]+ GiB per GPU = [\d,]+ tokens\), claiming [\d.]+ GiB of [\d.]+ GiB per GPU, meta-llama\/Llama-3\.1-8B on 1 x H100-80GB$/m);
  const no = spawnSync(cli, ['check', '--gpu', 'H100-80GB', '--', 'vllm', 'serve', 'meta-llama/Llama-3.1-70B', '-tp', '2',
    '--max-num-seqs', '32', '--max-model-len', '8192'], { encoding: 'utf8' });
  assert.equal(no.status, 3, no.stderr);
  assert.match(no.stdout, /^does not fit: \d+ of 32 sequences of 8,192 tokens fit \(KV pool [\d.]+ GiB per GPU = [\d,]+ tokens\), claiming [\d.]+ GiB of [\d.]+ GiB per GPU, /m);
  assert.doesNotMatch(no.stdout, /over by|headroom/);
});

test('an export of a run that does not fit says so in the file, or on stderr where the format has no comments', () => {
  const v = spawnSync(cli, ['export', 'vllm', ...issue], { encoding: 'utf8' });
  assert.equal(v.status, 0, v.stderr);
  assert.match(v.stdout, /^# gpumem: this run does not fit: \d+ of 32 sequences of 8192 tokens fit \(KV pool [\d.]+ GiB per GPU\); `gpumem fit` finds what would\nvllm serve /);
  assert.match(v.stderr, /gpumem: warning: this run does not fit/);
  for (const format of ['axolotl', 'torchtune', 'torchrun', 'accelerate']) {
    const y = spawnSync(cli, ['export', format, '--model', 'meta-llama/Llama-3.1-70B'], { encoding: 'utf8' });
    assert.equal(y.status, 0, y.stderr);
    assert.match(y.stdout, /^# gpumem: this run does not fit: [\d.]+ GiB of [\d.]+ GiB per GPU \(\d+ %\)/, format);
  }
  const ds = spawnSync(cli, ['export', 'deepspeed', '--model', 'meta-llama/Llama-3.1-70B'], { encoding: 'utf8' });
  assert.equal(ds.status, 0, ds.stderr);
  assert.ok(JSON.parse(ds.stdout), 'the JSON stays JSON');
  assert.match(ds.stderr, /gpumem: warning: this run does not fit: [\d.]+ GiB of/);
  // One that fits: no comment, no warning.
  const ok = spawnSync(cli, ['export', 'axolotl', '--model', 'meta-llama/Llama-3.1-8B', '--qlora'], { encoding: 'utf8' });
  assert.doesNotMatch(ok.stdout + ok.stderr, /does not fit/);
});

test('an adapter fine-tune checkpoints by default, and says why', () => {
  for (const flag of ['--lora', '--qlora']) {
    const r = spawnSync(cli, ['estimate', '--model', 'meta-llama/Llama-3.1-8B', flag], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /checkpointing full/);
    assert.match(r.stdout, /training\.activation_checkpointing = "full" \(what LoRA and QLoRA fine-tunes run: axolotl's and torchtune's example configs turn it on\)/);
  }
  const full = spawnSync(cli, ['estimate', '--model', 'meta-llama/Llama-3.1-8B'], { encoding: 'utf8' });
  assert.match(full.stdout, /checkpointing none/);
});
