// Planner speed: scenario evaluations per second (the planner's inner loop: one read scenario,
// many layouts, the estimate's own evaluate() with details off) and the time of whole plans,
// natively (the gpumem_planner_bench binary) and in WebAssembly under node (the same benchmark
// compiled by emcmake, and the module's plan() as the page would call it). Prints median and
// p90; always exits 0 unless a binary is missing.
//
//   node tests/bench/planner.mjs
//   env GPUMEM_PLANNER_BENCH (default build/native/tests/gpumem_planner_bench),
//       GPUMEM_PLANNER_BENCH_WASM (default build/wasm/tests/gpumem_planner_bench.js),
//       GPUMEM_WASM (default build/wasm/wasm/gpumem.js)
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const nativeBench = process.env.GPUMEM_PLANNER_BENCH || join(root, 'build/native/tests/gpumem_planner_bench');
const wasmBench = process.env.GPUMEM_PLANNER_BENCH_WASM || join(root, 'build/wasm/tests/gpumem_planner_bench.js');
const wasm = process.env.GPUMEM_WASM || join(root, 'build/wasm/wasm/gpumem.js');
const rounds = 15;
const quantile = (xs, q) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor((s.length - 1) * q + 0.5))]; };
const fmt = (n) => Math.round(n).toLocaleString('en');

function report(title, lines) {
  console.log(title);
  for (const r of lines) {
    if (r.error) console.log(`  ${r.case}: ERROR ${JSON.stringify(r.error)}`);
    else if (r.kind === 'evaluations')
      console.log(`  ${r.case} (${r.layouts} layouts): ${fmt(r.evaluations_per_s_median)} evaluations/s median, ${fmt(r.evaluations_per_s_p90)} p90`);
    else if (r.kind === 'fit')
      console.log(`  ${r.case}: ${r.fit_ms_median.toFixed(2)} ms median, ${r.fit_ms_p90.toFixed(2)} ms p90 ` +
                  `(${fmt(r.candidates)} runs scored over ${r.variants} variants, ${fmt(r.fitting)} fit, ${r.suggestions} suggestions)`);
    else
      console.log(`  ${r.case}: full plan ${r.plan_ms_median.toFixed(2)} ms median, ${r.plan_ms_p90.toFixed(2)} ms p90 ` +
                  `(${fmt(r.evaluations)} evaluations, ${r.fitting} fit; search ${fmt(r.search_evaluations_per_s_median)} evaluations/s)`);
  }
}

function runBench(command, args, title) {
  const out = spawnSync(command, args, { encoding: 'utf8', maxBuffer: 1 << 24 });
  if (out.status !== 0) { console.error(`planner bench failed (${command}):`, out.stderr.slice(0, 500)); process.exit(1); }
  report(title, out.stdout.trim().split('\n').map((l) => JSON.parse(l)));
}

if (existsSync(nativeBench)) runBench(nativeBench, [String(rounds)], 'native (gpumem_planner_bench, C++):');
else console.log(`native planner bench: not built (${nativeBench})`);

if (existsSync(wasmBench)) runBench(process.execPath, [wasmBench, String(rounds)], `WebAssembly under node ${process.version} (the same benchmark, emcmake):`);
else console.log(`WebAssembly planner bench: not built (${wasmBench})`);

// Through the module's JSON API, as the page calls it: plan() with JSON text in and out, every
// row's estimate included.
if (existsSync(wasm)) {
  const m = await createRequire(import.meta.url)(wasm)();
  const requests = {
    'Llama-3.1-70B on 64 x H100-80GB': { model: { preset: 'meta-llama/Llama-3.1-70B' }, training: { seq_len: 4096 },
      plan: { num_gpus: 64, gpu: 'H100-80GB', global_batch_size: 512 } },
    'DeepSeek-V3 on 256 x H100-80GB': { model: { preset: 'deepseek-ai/DeepSeek-V3' }, training: { seq_len: 4096 },
      plan: { num_gpus: 256, gpu: 'H100-80GB', global_batch_size: 1024 } },
  };
  console.log(`WebAssembly module plan() under node ${process.version} (JSON text in and out, ${rounds} rounds after 3 warm-up):`);
  for (const [name, request] of Object.entries(requests)) {
    const text = JSON.stringify(request);
    for (let i = 0; i < 3; i++) m.plan(text);
    const ms = [], rate = [];
    let last;
    for (let i = 0; i < rounds; i++) {
      const t0 = process.hrtime.bigint();
      last = JSON.parse(m.plan(text));
      ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
      rate.push(last.search.evaluations_per_s);
    }
    if (!last.ok) { console.log(`  ${name}: ERROR ${JSON.stringify(last.errors)}`); continue; }
    console.log(`  ${name}: full plan ${quantile(ms, 0.5).toFixed(1)} ms median, ${quantile(ms, 0.9).toFixed(1)} ms p90 ` +
                `(${fmt(last.search.evaluations)} evaluations, search ${fmt(quantile(rate, 0.5))} evaluations/s median, ` +
                `${fmt(quantile(rate, 0.1))} p90)`);
  }
  // fit() as the page calls it: the search over every knob of the scenario's own cluster.
  const fits = {
    'Llama-3.1-70B full fine-tuning, 8 x H100-80GB': { model: { preset: 'meta-llama/Llama-3.1-70B' },
      training: { method: 'full', batch_size: 2, seq_len: 4096 }, engine: { type: 'fsdp' },
      hardware: { gpu: 'H100-80GB', num_gpus: 8 } },
    'Llama-3.1-8B full fine-tuning 4 x 4096, 1 x H100-80GB': { model: { preset: 'meta-llama/Llama-3.1-8B' },
      training: { method: 'full', batch_size: 4, seq_len: 4096 }, hardware: { gpu: 'H100-80GB', num_gpus: 1 } },
  };
  console.log(`WebAssembly module fit() under node ${process.version} (JSON text in and out, ${rounds} rounds after 3 warm-up):`);
  for (const [name, scenario] of Object.entries(fits)) {
    const text = JSON.stringify(scenario);
    for (let i = 0; i < 3; i++) m.fit(text);
    const ms = [];
    let last;
    for (let i = 0; i < rounds; i++) {
      const t0 = process.hrtime.bigint();
      last = JSON.parse(m.fit(text));
      ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    if (!last.ok) { console.log(`  ${name}: ERROR ${JSON.stringify(last.errors)}`); continue; }
    console.log(`  ${name}: ${quantile(ms, 0.5).toFixed(1)} ms median, ${quantile(ms, 0.9).toFixed(1)} ms p90 ` +
                `(${fmt(last.search.candidates)} runs scored over ${last.search.variants} variants, ${last.suggestions.length} suggestions)`);
  }
} else {
  console.log(`WebAssembly module: not built (${wasm})`);
}
