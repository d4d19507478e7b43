// The accuracy figures against the published measured peaks, computed once for the benchmark that
// prints them (validation.mjs) and the test that keeps them from getting worse
// (tests/cli/validation.test.mjs, against validation_baseline.json).
//
// Each scored case in tests/data/validation/cases is estimated by the gpumem CLI (one --jsonl
// process) and compared with the figure its source measured. A case the product cannot answer as a
// user could counts as a 100 % error in every figure: an estimate that fails, and a case whose model
// is only staged in presets/pending (not bundled: a user's `--model ID` would not find it). Such a
// staged case's estimate is still shown, marked *, for information.
import { spawnSync } from 'node:child_process';
import { GiB, classOf, fieldOf, loadCases, scenarioOf } from './cases.mjs';

export const classes = ['full', 'lora', 'qlora', 'sharded', 'inference'];

export const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  if (!s.length) return NaN;
  const pos = (s.length - 1) * q, lo = Math.floor(pos), hi = Math.ceil(pos);
  return s[lo] + (s[hi] - s[lo]) * (pos - lo);
};

// {rows: [{id, cls, model, metric, measured, predicted, err, answered, why}],
//  summary: [{name, n, answered, median, p90, within10}]} (errors in %, absolute in the summary).
export function validationFigures(cli, all = false) {
  const cases = loadCases(all);
  const input = cases.map((c) => JSON.stringify(scenarioOf(c, cli))).join('\n') + '\n';
  const run = spawnSync(cli, ['estimate', '--jsonl'], { input, encoding: 'utf8', maxBuffer: 1 << 28 });
  if (run.error) throw run.error;
  const results = run.stdout.trim().split('\n').map((l) => JSON.parse(l));
  if (results.length !== cases.length) throw new Error(`${results.length} results for ${cases.length} cases: ${run.stderr}`);
  const rows = cases.map((c, i) => {
    const r = results[i];
    const row = { id: c.id, cls: classOf(c), metric: c.measured.metric, measured: c.measured.gib,
      model: (c.staged ? '*' : '') + (c.scenario.model?.preset || c.scenario.model?.name || 'config.json') };
    if (c.measured.gib == null) return { ...row, answered: false, scored: false, why: 'no figure in GiB' };
    if (!r.ok) return { ...row, answered: false, scored: true, why: r.errors[0].message };
    const predicted = r.per_gpu[fieldOf[c.measured.metric]] / GiB;
    const err = (predicted - c.measured.gib) / c.measured.gib * 100;
    if (c.staged) return { ...row, predicted, err, answered: false, scored: true, why: 'model only staged in presets/pending' };
    // The error band (per_gpu.band: measured / estimated of the other runs of its class; this case's own run
    // is left out by its scenario key) scaled onto the figure this source measured.
    const b = r.per_gpu.band;
    const ratio = c.measured.gib / predicted;
    const inBand = ratio >= Math.min(1, b.ratio_low) && ratio <= Math.max(1, b.ratio_high);
    return { ...row, predicted, err, answered: true, scored: true, inBand, excludedSelf: b.excluded_self };
  });
  const scored = rows.filter((r) => r.scored);
  const figures = (name, keys) => {
    const inClass = scored.filter((r) => keys.includes(r.cls));
    const xs = inClass.map((r) => (r.answered ? Math.abs(r.err) : 100));
    return { name, n: inClass.length, answered: inClass.filter((r) => r.answered).length,
      median: quantile(xs, 0.5), p90: quantile(xs, 0.9), within10: xs.filter((x) => x <= 10).length };
  };
  const summary = [...classes.map((k) => figures(k, [k])),
    figures('training (all)', classes.filter((k) => k !== 'inference')), figures('all', classes)];
  return { rows, summary };
}
