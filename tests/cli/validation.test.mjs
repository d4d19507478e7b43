// The accuracy against the published measured peaks may not get worse: each class's median and p90
// absolute error, and its number of unanswered cases, against the figures recorded in
// tests/bench/validation_baseline.json. Estimates are deterministic, so this is no timed test: a
// change to the memory model that moves a figure past its record fails here, naming the class. A
// change that improves a figure passes; record the new figures then (the message says how), so the
// improvement cannot be lost silently later.
//
//   GPUMEM_CLI=build/native/core/cli/gpumem node --test tests/cli/validation.test.mjs
//   node tests/bench/validation.mjs      (the figures, case by case)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { root } from '../bench/cases.mjs';
import { validationFigures } from '../bench/validation_figures.mjs';

const cli = process.env.GPUMEM_CLI || join(root, 'build/native/core/cli/gpumem');
const baseline = JSON.parse(readFileSync(join(root, 'tests/bench/validation_baseline.json'), 'utf8'));
// The recorded figures have one decimal; a figure within half of that is the same figure.
const SAME = 0.05;

// Figures that got worse than recorded, as lines naming the class.
function regressions(summary, recorded) {
  const out = [];
  for (const [name, rec] of Object.entries(recorded)) {
    const now = summary.find((s) => s.name === name);
    if (!now) { out.push(`${name}: no longer reported`); continue; }
    if (now.n < rec.n) out.push(`${name}: ${now.n} cases, recorded ${rec.n} (a case left the set)`);
    if (now.n - now.answered > rec.unanswered) out.push(`${name}: ${now.n - now.answered} unanswered, recorded ${rec.unanswered}`);
    for (const k of ['median', 'p90'])
      if (now[k] > rec[k] + SAME) out.push(`${name}: ${k} ${now[k].toFixed(2)} %, recorded ${rec[k]} %`);
  }
  return out;
}

test('the comparison finds a class whose median, p90 or unanswered count got worse', () => {
  const rec = { lora: { n: 19, unanswered: 0, median: 3.8, p90: 8.4 } };
  assert.deepEqual(regressions([{ name: 'lora', n: 19, answered: 19, median: 3.84, p90: 8.45 }], rec), []);
  assert.equal(regressions([{ name: 'lora', n: 19, answered: 19, median: 3.9, p90: 8.4 }], rec).length, 1);
  assert.equal(regressions([{ name: 'lora', n: 19, answered: 19, median: 3.8, p90: 9.0 }], rec).length, 1);
  assert.equal(regressions([{ name: 'lora', n: 19, answered: 18, median: 3.8, p90: 8.4 }], rec).length, 1);
  assert.equal(regressions([], rec).length, 1);
});

test('no class is less accurate against the measured peaks than recorded (median, p90, unanswered)', () => {
  const { summary } = validationFigures(cli);
  const worse = regressions(summary, baseline.classes);
  const now = Object.fromEntries(summary.map((s) => [s.name,
    { n: s.n, unanswered: s.n - s.answered, median: Number(s.median.toFixed(1)), p90: Number(s.p90.toFixed(1)) }]));
  assert.deepEqual(worse, [], `worse than recorded:\n  ${worse.join('\n  ')}\nnow: ${JSON.stringify(now)}`);
  const better = summary.filter((s) => baseline.classes[s.name] &&
    (s.median < baseline.classes[s.name].median - SAME || s.p90 < baseline.classes[s.name].p90 - SAME));
  if (better.length)
    console.log(`better than recorded: ${better.map((s) => s.name).join(', ')}; record it in ` +
      `tests/bench/validation_baseline.json "classes": ${JSON.stringify(now)}`);
});
