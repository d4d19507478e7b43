// Accuracy benchmark: every published measured peak in tests/data/validation/cases, estimated by
// the gpumem CLI, compared with the figure the source measured. Prints one row per case, then the
// median and p90 absolute percentage error per class (validation_figures.mjs computes them; a case
// not answered as a user could counts as 100 %). The test that keeps these figures from getting
// worse is tests/cli/validation.test.mjs; this script only prints (exit 2 without a CLI).
//
//   node tests/bench/validation.mjs [--all]     (--all: also the cases marked scored=false)
//   env GPUMEM_CLI: the gpumem binary (default build/native/core/cli/gpumem)
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { root } from './cases.mjs';
import { quantile, validationFigures } from './validation_figures.mjs';

const cli = process.env.GPUMEM_CLI || join(root, 'build/native/core/cli/gpumem');
if (!existsSync(cli)) {
  console.error(`validation: no CLI at ${cli} (build it first: ./make.sh test, or cmake --build build/native)`);
  process.exit(2);
}

const { rows, summary } = validationFigures(cli, process.argv.includes('--all'));
console.log('id     class      model                                        metric        measured  predicted    error');
for (const r of rows) {
  const head = `${r.id}   ${r.cls.padEnd(9)}  ${r.model.slice(0, 44).padEnd(44)} ${r.metric.padEnd(12)}`;
  if (r.predicted == null) {
    console.log(`${head}  ${r.scored ? 'unanswered (100 %)' : 'not scored'}: ${r.why.slice(0, 90)}`);
    continue;
  }
  const err = `${(r.err >= 0 ? '+' : '') + r.err.toFixed(1).padStart(6)}%`;
  console.log(`${head} ${r.measured.toFixed(2).padStart(8)} ${r.predicted.toFixed(2).padStart(10)} ${err}` +
    (r.answered ? '' : `   counted as 100 %: ${r.why}`));
}

console.log('\nabsolute percentage error by class (answered / in class; an unanswered case counts as 100 %)');
for (const s of summary) {
  console.log(`  ${s.name.padEnd(15)} n=${String(s.answered).padStart(3)}/${String(s.n).padEnd(3)}  median ${s.median.toFixed(1).padStart(6)}%` +
    `  p90 ${s.p90.toFixed(1).padStart(6)}%  within 10 %: ${String(s.within10).padStart(3)}/${s.n} (${(s.within10 / s.n * 100).toFixed(0)} %)` +
    `  unanswered ${s.n - s.answered}`);
}
const signed = rows.filter((r) => r.answered).map((r) => r.err);
console.log(`  bias: median signed error ${quantile(signed, 0.5).toFixed(1)}% (positive: over-estimates) over the answered cases`);
const banded = rows.filter((r) => r.answered);
const inside = banded.filter((r) => r.inBand).length, self = banded.filter((r) => r.excludedSelf > 0).length;
console.log(`  error band, leave-one-out: ${inside}/${banded.length} measured peaks inside their 80 % band ` +
  `(${(inside / banded.length * 100).toFixed(0)} %); ${self} of them left their own run out of the band`);
const staged = rows.filter((r) => r.model.startsWith('*')).length;
if (staged) console.log(`  * ${staged} case(s) whose model is only staged in presets/pending: not answered as a user could (counted as 100 %); the estimate from the staged config is shown`);
