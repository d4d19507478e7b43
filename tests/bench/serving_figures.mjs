// The serving figures against vLLM's own start-up log (tests/data/serving, see its README), computed
// once for the benchmark that prints them (serving.mjs) and the test that keeps them from getting
// worse (tests/cli/serving.test.mjs, against serving_baseline.json).
//
// Each case is estimated by the gpumem CLI (one --jsonl process) and compared, per GPU, with what
// vLLM logged:
//   - the KV pool ("Available KV cache memory") with serving.kv_cache_bytes. A case where vLLM had no
//     room (the log's pool is negative, or absent: it did not start, its pool under one sequence of
//     max_model_len) is scored on the verdict: 0 % when the estimate also finds no room for one
//     sequence, 100 % when it claims there is;
//   - the rest of the budget (the profile run's torch peak increase + the non-torch increase, both
//     inside gpu_memory_utilization x total) with what the estimate sets aside for them;
//   - the weights ("Model loading took") with per_gpu.components.weights;
//   - the CUDA graph capture (outside the budget in V1), as an absolute error in GiB, for information;
//   - the verdict: the estimate's "fits" against whether vLLM started.
// A case the product cannot answer (the estimate fails) counts as 100 % in every figure.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { GiB, root } from './cases.mjs';
import { quantile } from './validation_figures.mjs';

const dir = join(root, 'tests/data/serving');

export function loadServingCases() {
  return readdirSync(dir).filter((f) => /^s\d+\.json$/.test(f)).sort()
    .map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')));
}

// The vLLM version a case ran. The source's Mistral-Small-3.2 section names vllm/vllm-openai:v0.11.0;
// its other rows were re-run with vllm/vllm-openai:latest in January 2026 (the case notes), which is
// after vLLM 0.11.0: those take the newest family gpumem knows (the scenario's default).
export function engineVersionOf(c) {
  const fw = c.scenario.extras?.framework || '';
  return /see notes/.test(fw) ? null : (fw.match(/vLLM (\d+\.\d+(?:\.\d+)?)/) || [])[1] || null;
}

// The scenario gpumem estimates: the case's own, with the vLLM arguments its extras record.
export function servingScenarioOf(c) {
  const { extras, ...scenario } = c.scenario;
  const x = extras || {};
  const inference = { ...scenario.inference };
  if (x.block_size) inference.block_size = x.block_size;
  if (x.max_num_batched_tokens) inference.max_num_batched_tokens = x.max_num_batched_tokens;
  if (x.max_num_seqs) inference.max_num_seqs = x.max_num_seqs;
  const version = engineVersionOf(c);
  if (version) inference.engine_version = version;
  return { ...scenario, inference };
}

// What the estimate sets aside inside the budget beside the weights and the pool.
function restOf(r) {
  const a = r.assumptions || {};
  if (a.vllm_activation_peak_bytes != null) return (a.vllm_activation_peak_bytes + (a.vllm_non_torch_bytes || 0)) / GiB;
  // Before the estimate named them: the budget less the weights and the pool (when there is a pool),
  // else the profile step's parts.
  const c = r.per_gpu.components;
  if (r.serving.kv_cache_bytes > 0) return (a.vllm_budget_bytes - c.weights - r.serving.kv_cache_bytes) / GiB;
  return (c.activations + c.logits + c.overheads) / GiB;
}

const pct = (p, m) => (p - m) / m * 100;

// {rows: [{id, model, tp, answered, why, kv: {measured, predicted, err}, rest: {...}, weights: {...},
//  graph: {...}}], summary: {n, unanswered, kv: {median, p90}, rest: {median, p90}, weights: {median, p90},
//  graph_gib: {median}}} (errors in %, absolute in the summary; graph in GiB).
export function servingFigures(cli) {
  const cases = loadServingCases();
  const input = cases.map((c) => JSON.stringify(servingScenarioOf(c))).join('\n') + '\n';
  const run = spawnSync(cli, ['estimate', '--jsonl'], { input, encoding: 'utf8', maxBuffer: 1 << 28 });
  if (run.error) throw run.error;
  const results = run.stdout.trim().split('\n').map((l) => JSON.parse(l));
  if (results.length !== cases.length) throw new Error(`${results.length} results for ${cases.length} cases: ${run.stderr}`);
  const rows = cases.map((c, i) => {
    const r = results[i], m = c.scenario.extras.measured_components_gib;
    const row = { id: c.id, model: c.scenario.model.preset, tp: c.scenario.parallelism.tensor_parallel_size,
      version: engineVersionOf(c) || 'default' };
    if (!r.ok) return { ...row, answered: false, why: r.errors[0].message };
    const kvPred = r.serving.kv_cache_bytes / GiB;
    const refused = m.kv_cache == null || m.kv_cache <= 0;
    const starts = kvPred > 0 && r.serving.max_concurrent_sequences >= 1;
    const kv = refused ? { measured: m.kv_cache, predicted: kvPred, err: starts ? 100 : 0, verdict: true }
      : { measured: m.kv_cache, predicted: kvPred, err: pct(kvPred, m.kv_cache) };
    const restMeasured = m.activation_peak + m.non_torch_increase, restPred = restOf(r);
    const wPred = r.per_gpu.components.weights / GiB;
    const graphPred = (r.assumptions?.vllm_cuda_graph_bytes ?? NaN) / GiB;
    // The verdict: vLLM started (a positive pool holding a sequence of max_model_len) or refused; the estimate's
    // "fits" (the pool holds the batch and the card holds what vLLM then holds) should say the same.
    const verdict = r.fits === !refused;
    return { ...row, answered: true, kv, verdict,
      rest: { measured: restMeasured, predicted: restPred, err: pct(restPred, restMeasured) },
      weights: { measured: m.weights, predicted: wPred, err: pct(wPred, m.weights) },
      graph: { measured: m.cuda_graph, predicted: graphPred, err: m.cuda_graph == null ? NaN : graphPred - m.cuda_graph } };
  });
  const figure = (key) => {
    const xs = rows.map((r) => (r.answered ? Math.abs(r[key].err) : 100));
    const answered = rows.filter((r) => r.answered).map((r) => Math.abs(r[key].err));
    return { median: quantile(xs, 0.5), p90: quantile(xs, 0.9),
      answered: { median: quantile(answered, 0.5), p90: quantile(answered, 0.9) } };
  };
  const graphs = rows.filter((r) => r.answered && Number.isFinite(r.graph.err)).map((r) => Math.abs(r.graph.err));
  const summary = { n: rows.length, unanswered: rows.filter((r) => !r.answered).length,
    verdicts: rows.filter((r) => r.answered && r.verdict).length,
    kv: figure('kv'), rest: figure('rest'), weights: figure('weights'),
    graph_gib: { n: graphs.length, median: graphs.length ? quantile(graphs, 0.5) : NaN } };
  return { rows, summary };
}
