// Speed benchmark: scenario evaluations per second through the native CLI (--jsonl, JSON in and
// out included) and through the WebAssembly module under node. Prints median and p90 per
// estimate over several rounds; always exits 0 unless a binary is missing.
//
//   node tests/bench/speed.mjs
//   env GPUMEM_CLI (default build/native/core/cli/gpumem), GPUMEM_WASM (default build/wasm/wasm/gpumem.js)
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const cli = process.env.GPUMEM_CLI || join(root, 'build/native/core/cli/gpumem');
const wasm = process.env.GPUMEM_WASM || join(root, 'build/wasm/wasm/gpumem.js');

// A spread of scenarios: training and inference, several models, engines and sizes.
const models = ['meta-llama/Llama-3.1-8B', 'Qwen/Qwen2.5-7B', 'mistralai/Mixtral-8x7B-v0.1', 'google/gemma-2-9b'];
const scenarios = [];
for (let i = 0; i < 2000; i++) {
  const model = { preset: models[i % models.length] };
  scenarios.push(i % 3 === 2
    ? { model, mode: 'inference', inference: { batch_size: 1 + (i % 16), context_len: 1024 * (1 + (i % 8)) } }
    : { model, training: { batch_size: 1 + (i % 8), seq_len: 512 * (1 + (i % 8)), method: ['full', 'lora', 'qlora'][i % 3] },
        engine: i % 2 ? { type: 'deepspeed', zero_stage: 3 } : { type: 'none' },
        parallelism: { data_parallel_size: i % 2 ? 8 : 1 } });
}
const lines = scenarios.map((s) => JSON.stringify(s));
const quantile = (xs, q) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor((s.length - 1) * q + 0.5))]; };
const rounds = 7;

if (existsSync(cli)) {
  const perEstimate = [];
  for (let r = 0; r < rounds; r++) {
    const t0 = process.hrtime.bigint();
    const out = spawnSync(cli, ['estimate', '--jsonl'], { input: lines.join('\n') + '\n', encoding: 'utf8', maxBuffer: 1 << 28 });
    const us = Number(process.hrtime.bigint() - t0) / 1000 / lines.length;
    if (out.status !== 0) { console.error('speed: the CLI failed:', out.stderr.slice(0, 300)); process.exit(1); }
    perEstimate.push(us);
  }
  console.log(`native CLI --jsonl (process start, JSON parse and print included), ${lines.length} scenarios x ${rounds} rounds:`);
  console.log(`  per estimate: median ${quantile(perEstimate, 0.5).toFixed(1)} us, p90 ${quantile(perEstimate, 0.9).toFixed(1)} us` +
              `  (${Math.round(1e6 / quantile(perEstimate, 0.5)).toLocaleString('en')} estimates/s)`);
  const one = [];
  for (let r = 0; r < 20; r++) {
    const t0 = process.hrtime.bigint();
    spawnSync(cli, ['estimate', '--model', 'meta-llama/Llama-3.1-8B', '--json'], { encoding: 'utf8' });
    one.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  console.log(`  one CLI invocation (estimate --model ... --json): median ${quantile(one, 0.5).toFixed(1)} ms, p90 ${quantile(one, 0.9).toFixed(1)} ms`);
} else {
  console.log(`native CLI: not built (${cli})`);
}

if (existsSync(wasm)) {
  const m = await createRequire(import.meta.url)(wasm)();
  for (const l of lines.slice(0, 200)) m.estimate(l);  // warm up the JIT
  const perEstimate = [];
  for (let r = 0; r < rounds; r++) {
    const t0 = process.hrtime.bigint();
    for (const l of lines) m.estimate(l);
    perEstimate.push(Number(process.hrtime.bigint() - t0) / 1000 / lines.length);
  }
  console.log(`WebAssembly module under node ${process.version} (JSON string in and out), ${lines.length} scenarios x ${rounds} rounds:`);
  console.log(`  per estimate: median ${quantile(perEstimate, 0.5).toFixed(1)} us, p90 ${quantile(perEstimate, 0.9).toFixed(1)} us` +
              `  (${Math.round(1e6 / quantile(perEstimate, 0.5)).toLocaleString('en')} estimates/s)`);
} else {
  console.log(`WebAssembly module: not built (${wasm})`);
}
