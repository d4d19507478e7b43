// Accuracy benchmark: every published measured peak in tests/data/validation/cases, estimated by
// the gpumem CLI, compared with the figure the source measured. Prints one row per case, then the
// median and p90 absolute percentage error per class. A benchmark, not a test: it always exits 0
// unless the CLI is missing.
//
//   node tests/bench/validation.mjs [--all]     (--all: also the cases marked scored=false)
//   env GPUMEM_CLI: the gpumem binary (default build/native/core/cli/gpumem)
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { GiB, classOf, fieldOf, loadCases, root, scenarioOf } from './cases.mjs';

const cli = process.env.GPUMEM_CLI || join(root, 'build/native/core/cli/gpumem');
const all = process.argv.includes('--all');
if (!existsSync(cli)) {
  console.error(`validation: no CLI at ${cli} (build it first: ./make.sh test, or cmake --build build/native)`);
  process.exit(2);
}

const cases = loadCases(all);
const input = cases.map((c) => JSON.stringify(scenarioOf(c, cli))).join('\n') + '\n';
const run = spawnSync(cli, ['estimate', '--jsonl'], { input, encoding: 'utf8', maxBuffer: 1 << 28 });
const results = run.stdout.trim().split('\n').map((l) => JSON.parse(l));

const rows = [];
const byClass = {};
let skipped = 0;
console.log('id     class      model                                        metric        measured  predicted    error');
cases.forEach((c, i) => {
  const r = results[i];
  const cls = classOf(c);
  const model = ((c.staged ? '*' : '') + (c.scenario.model?.preset || c.scenario.model?.name || 'config.json')).slice(0, 44).padEnd(44);
  const metric = c.measured.metric;
  if (c.measured.gib == null) {
    console.log(`${c.id}   ${cls.padEnd(9)}  ${model} ${metric.padEnd(12)}  no figure in GiB: skipped`);
    skipped++;
    return;
  }
  if (!r.ok) {
    console.log(`${c.id}   ${cls.padEnd(9)}  ${model} ${metric.padEnd(12)}  skipped: ${r.errors[0].message.slice(0, 90)}`);
    skipped++;
    return;
  }
  const predicted = r.per_gpu[fieldOf[metric]] / GiB;
  const err = (predicted - c.measured.gib) / c.measured.gib * 100;
  rows.push({ id: c.id, cls, err });
  (byClass[cls] ||= []).push(Math.abs(err));
  console.log(`${c.id}   ${cls.padEnd(9)}  ${model} ${metric.padEnd(12)} ${c.measured.gib.toFixed(2).padStart(8)} ${predicted.toFixed(2).padStart(10)} ${(err >= 0 ? '+' : '') + err.toFixed(1).padStart(6)}%`);
});

const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  if (!s.length) return NaN;
  const pos = (s.length - 1) * q, lo = Math.floor(pos), hi = Math.ceil(pos);
  return s[lo] + (s[hi] - s[lo]) * (pos - lo);
};
// A case the CLI cannot answer counts as a 100 % error in every figure (and is counted), never left out.
console.log('\nabsolute percentage error by class (answered / in class; an unanswered case counts as 100 %)');
const classes = ['full', 'lora', 'qlora', 'sharded', 'inference'];
const withMisses = (keys) => {
  const answered = keys.flatMap((k) => byClass[k] || []);
  const total = cases.filter((c) => keys.includes(classOf(c))).length;
  return [answered, total, [...answered, ...Array(total - answered.length).fill(100)]];
};
const summary = [...classes.map((k) => [k, ...withMisses([k])]),
  ['training (all)', ...withMisses(classes.filter((k) => k !== 'inference'))],
  ['all', ...withMisses(classes)]];
for (const [name, answered, total, xs] of summary) {
  const within = xs.filter((x) => x <= 10).length;
  console.log(`  ${name.padEnd(15)} n=${String(answered.length).padStart(3)}/${String(total).padEnd(3)}  median ${quantile(xs, 0.5).toFixed(1).padStart(6)}%` +
    `  p90 ${quantile(xs, 0.9).toFixed(1).padStart(6)}%  within 10 %: ${String(within).padStart(3)}/${total} (${(within / total * 100).toFixed(0)} %)` +
    `  unanswered ${total - answered.length}`);
}
const signed = rows.map((r) => r.err);
console.log(`  bias: median signed error ${quantile(signed, 0.5).toFixed(1)}% (positive: over-estimates); ${skipped} case(s) skipped`);
const stagedCases = cases.filter((c) => c.staged).length;
if (stagedCases) console.log(`  * ${stagedCases} case(s) estimated from a staged config in presets/pending (sizes checked, not yet a copy of the Hub file)`);
