// Honest coverage of the error band: the validation set's runs (bands.mjs) split in two halves by source
// document (every row of one table on the same side), the band fitted on one half and each case of the
// other estimated with it; the share of measured peaks that fall inside their 80 % band must land between
// 70 % and 90 % (exit 1 otherwise). Both ways round, then together.
//
// The held-out cases go through the core's own band code: each scenario carries the training half as its
// "calibration" runs (the way a calibration file's residuals reach the estimate), so the class fallback
// and the order statistics measured here are the ones every estimate uses.
//
//   node tests/bench/band_coverage.mjs      env GPUMEM_CLI: the gpumem binary (default build/native/core/cli/gpumem)
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { loadCases, root, scenarioOf } from './cases.mjs';
import { bandRuns } from './bands.mjs';

const cli = process.env.GPUMEM_CLI || join(root, 'build/native/core/cli/gpumem');
if (!existsSync(cli)) {
  console.error(`band coverage: no CLI at ${cli} (build it first: cmake --build build/native --target gpumem)`);
  process.exit(2);
}

const runs = bandRuns(cli);
const cases = new Map(loadCases(false).map((c) => [c.id, c]));

// Halves by document: the largest documents first, each to the half with fewer runs so far.
const byDoc = new Map();
for (const r of runs) byDoc.set(r.source, [...(byDoc.get(r.source) || []), r]);
const halves = [[], []];
const docs = [[], []];
for (const [doc, rs] of [...byDoc].sort((a, b) => b[1].length - a[1].length || a[0].localeCompare(b[0]))) {
  const h = halves[0].length <= halves[1].length ? 0 : 1;
  halves[h].push(...rs);
  docs[h].push(`${doc} (${rs.length})`);
}

const residual = ({ id, mode, stack, method, gpus, ratio, key }) => ({ id, mode, stack, method, gpus, ratio, key });

function heldOut(train, test, name) {
  const calibration = { name, hash: '', residuals: train.map(residual) };
  const input = test.map((r) => JSON.stringify({ ...scenarioOf(cases.get(r.id), cli), calibration })).join('\n') + '\n';
  const run = spawnSync(cli, ['estimate', '--jsonl'], { input, encoding: 'utf8', maxBuffer: 1 << 28 });
  if (run.error) throw run.error;
  const results = run.stdout.trim().split('\n').map((l) => JSON.parse(l));
  return test.map((r, i) => {
    const b = results[i].per_gpu.band;
    const inside = r.ratio >= Math.min(1, b.ratio_low) && r.ratio <= Math.max(1, b.ratio_high);
    return { ...r, inside, level: b.level, width: Math.max(1, b.ratio_high) - Math.min(1, b.ratio_low) };
  });
}

const pct = (k, n) => `${(k / n * 100).toFixed(1)} %`;
const all = [];
for (const [train, test, name] of [[0, 1, 'A -> B'], [1, 0, 'B -> A']]) {
  const rows = heldOut(halves[train], halves[test], name);
  all.push(...rows);
  const k = rows.filter((r) => r.inside).length;
  console.log(`fold ${name}: bands from ${halves[train].length} runs (${docs[train].join(', ')})`);
  console.log(`  held out ${rows.length}: ${k} inside their 80 % band (${pct(k, rows.length)})`);
  const levels = new Map();
  for (const r of rows) {
    const l = levels.get(r.level) || [0, 0];
    levels.set(r.level, [l[0] + (r.inside ? 1 : 0), l[1] + 1]);
  }
  console.log('  by the level the band came from: ' + [...levels].map(([l, [a, n]]) => `${l} ${a}/${n}`).join(', '));
  const missed = rows.filter((r) => !r.inside).map((r) => `${r.id} (${r.ratio})`);
  if (missed.length) console.log(`  outside: ${missed.join(', ')}`);
}
const inside = all.filter((r) => r.inside).length;
const widths = all.map((r) => r.width).sort((a, b) => a - b);
console.log(`held-out coverage of the 80 % band: ${inside}/${all.length} = ${pct(inside, all.length)} ` +
  `(median band width ${(widths[Math.floor(widths.length / 2)] * 100).toFixed(1)} % of the point)`);
if (inside / all.length < 0.7 || inside / all.length > 0.9) {
  console.error('band coverage: outside 70-90 %: the band does not mean what it says');
  process.exit(1);
}
