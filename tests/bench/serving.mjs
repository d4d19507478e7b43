// Serving benchmark: vLLM's start-up figures in tests/data/serving (the KV pool, the rest of the
// budget, the weights, the CUDA graphs per GPU as vLLM logged them) against the gpumem CLI's
// estimate, case by case, then the median and p90 absolute percentage errors (serving_figures.mjs
// computes them; an unanswered case counts as 100 %). tests/cli/serving.test.mjs keeps them from
// getting worse; this script only prints (exit 2 without a CLI).
//
//   node tests/bench/serving.mjs
//   env GPUMEM_CLI: the gpumem binary (default build/native/core/cli/gpumem)
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { root } from './cases.mjs';
import { servingFigures } from './serving_figures.mjs';

const cli = process.env.GPUMEM_CLI || join(root, 'build/native/core/cli/gpumem');
if (!existsSync(cli)) {
  console.error(`serving: no CLI at ${cli} (build it first: cmake --build build/native)`);
  process.exit(2);
}

const { rows, summary } = servingFigures(cli);
const f = (x) => (x == null || !Number.isFinite(x) ? '     -' : x.toFixed(2).padStart(6));
const e = (x) => (Number.isFinite(x) ? `${(x >= 0 ? '+' : '') + x.toFixed(1)}%`.padStart(8) : '       -');
console.log('id    model                                        tp  vLLM     |  KV pool GiB: log   gpumem    error' +
  ' |  rest GiB: log gpumem   error | weights GiB: log gpumem   error | graph GiB: log gpumem');
for (const r of rows) {
  const head = `${r.id}  ${r.model.slice(0, 44).padEnd(44)} ${String(r.tp).padStart(2)}  ${r.version.padEnd(8)}`;
  if (!r.answered) { console.log(`${head} |  unanswered (100 %): ${r.why.slice(0, 100)}`); continue; }
  const kvErr = r.kv.verdict ? (r.kv.err ? '  claims a pool vLLM had not (100 %)' : '  no pool, as vLLM (0 %)') : e(r.kv.err);
  console.log(`${head} |             ${f(r.kv.measured)}   ${f(r.kv.predicted)} ${kvErr.padEnd(8)} |        ${f(r.rest.measured)} ` +
    `${f(r.rest.predicted)} ${e(r.rest.err)} |         ${f(r.weights.measured)} ${f(r.weights.predicted)} ${e(r.weights.err)} |` +
    `       ${f(r.graph.measured)} ${f(r.graph.predicted)}`);
}
const s = summary;
console.log(`\n${s.n} cases, ${s.unanswered} unanswered (each counted as 100 % in every figure); absolute errors:`);
const line = (name, f, what = '') => console.log(`  ${name.padEnd(18)} median ${f.median.toFixed(1).padStart(6)}%  ` +
  `p90 ${f.p90.toFixed(1).padStart(6)}%   (answered only: median ${f.answered.median.toFixed(1).padStart(5)}%, ` +
  `p90 ${f.answered.p90.toFixed(1).padStart(6)}%)${what}`);
line('KV pool', s.kv);
line('rest of the budget', s.rest, '  profile-run activation peak + non-torch memory');
line('weights', s.weights);
console.log(`  verdict (fits = vLLM started): ${s.verdicts} of ${s.n - s.unanswered} answered cases` +
  (rows.some((r) => r.answered && !r.verdict) ? ` (not: ${rows.filter((r) => r.answered && !r.verdict).map((r) => r.id).join(', ')})` : ''));
console.log(`  CUDA graphs        median ${Number.isFinite(s.graph_gib.median) ? s.graph_gib.median.toFixed(2) : '-'} GiB ` +
  `over ${s.graph_gib.n} cases (outside the budget; for information)`);
