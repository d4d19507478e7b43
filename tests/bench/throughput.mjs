// Throughput benchmark: every published tokens/s figure in tests/data/throughput/cases.json (its
// source and setup recorded there), estimated by the gpumem CLI and compared with the figure
// published. Prints one row per case, then the median and p90 absolute percentage error, overall
// and for decode and training. A case the CLI cannot answer counts as 100 %. A benchmark, not a
// test: it always exits 0 unless the CLI is missing.
//
//   node tests/bench/throughput.mjs
//   env GPUMEM_CLI: the gpumem binary (default build/native/core/cli/gpumem)
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const cli = process.env.GPUMEM_CLI || join(root, 'build/native/core/cli/gpumem');
if (!existsSync(cli)) {
  console.error(`throughput: no CLI at ${cli} (build it first: cmake --build build/native)`);
  process.exit(2);
}

const data = JSON.parse(readFileSync(join(root, 'tests/data/throughput/cases.json'), 'utf8'));
const input = data.cases.map((c) => JSON.stringify({ version: 1, ...c.scenario })).join('\n') + '\n';
const run = spawnSync(cli, ['estimate', '--jsonl'], { input, encoding: 'utf8', maxBuffer: 1 << 28 });
const results = run.stdout.trim().split('\n').map((l) => JSON.parse(l));

const quantile = (xs, q) => {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)];
};
const pct = (x) => `${(100 * x).toFixed(1)} %`;

const errors = { all: [], decode: [], training: [] };
console.log('id               source            field                           published   predicted    error  what');
data.cases.forEach((c, i) => {
  const r = results[i];
  const predicted = r && r.ok && r.throughput ? r.throughput[c.field] : undefined;
  const kind = c.field.startsWith('training') ? 'training' : 'decode';
  let error = 1;
  let shown = 'no answer';
  if (typeof predicted === 'number' && Number.isFinite(predicted) && predicted > 0) {
    error = Math.abs(predicted - c.published) / c.published;
    shown = predicted.toFixed(1);
  } else if (r && !r.ok) {
    shown = `refused: ${r.errors[0].message.slice(0, 40)}`;
  }
  errors.all.push(error);
  errors[kind].push(error);
  console.log(`${c.id.padEnd(16)} ${c.source.padEnd(17)} ${c.field.padEnd(31)} ${String(c.published).padStart(9)}  ` +
    `${shown.padStart(10)}  ${pct(error).padStart(7)}  ${c.what}`);
});
console.log('');
for (const [name, xs] of Object.entries(errors))
  console.log(`${name.padEnd(9)} cases ${String(xs.length).padStart(3)}   ` +
    `median ${pct(quantile(xs, 0.5)).padStart(7)}   p90 ${pct(quantile(xs, 0.9)).padStart(7)}`);
console.log('\nsources:');
for (const [id, s] of Object.entries(data.sources))
  console.log(`  ${id}: ${s.repo} ${s.path} ${s.commit || s.url}`);
