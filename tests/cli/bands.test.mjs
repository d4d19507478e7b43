// The error band on every estimate: presets/error_bands.json current against the estimator (it is the
// validation set's measured / estimated, so a change to the memory model must regenerate it), the line the
// CLI prints, the three-state verdict beside the boolean fits, and a calibration's own runs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { root } from '../bench/cases.mjs';
import { bandRuns, bandsFile, bandsText } from '../bench/bands.mjs';

const cli = process.env.GPUMEM_CLI || join(root, 'build/native/core/cli/gpumem');
const gpumem = (args, input) => spawnSync(cli, args, { encoding: 'utf8', input });

test('presets/error_bands.json is what the current estimator gives (else: node tests/bench/bands.mjs --write)', () => {
  const fresh = bandsText(bandRuns(cli));
  assert.equal(readFileSync(bandsFile, 'utf8'), fresh,
    'stale error bands: the memory model changed; regenerate with node tests/bench/bands.mjs --write');
});

test('estimate prints the band of runs like this one', () => {
  // Inference with transformers on one GPU: a class with enough measured runs of its own.
  const out = gpumem(['estimate', '--model', 'meta-llama/Llama-3.1-8B', '--mode', 'inference']);
  assert.equal(out.status, 0, out.stderr);
  assert.match(out.stdout,
    /error band: \d+\.\d GiB \(80 % of \d+ measured runs like this: \d+\.\d-\d+\.\d GiB\); \d+ % of them would not have fit this card/);
  const j = JSON.parse(gpumem(['estimate', '--model', 'meta-llama/Llama-3.1-8B', '--mode', 'inference', '--json']).stdout);
  const b = j.per_gpu.band;
  assert.equal(b.level, 'class');
  assert.ok(b.runs >= 9);
  assert.ok(b.low_bytes <= j.per_gpu.device_total_bytes && j.per_gpu.device_total_bytes <= b.high_bytes);
  assert.equal(j.verdict, b.high_bytes <= j.per_gpu.capacity_bytes ? 'fits' : 'borderline');
  assert.equal(j.fits, true);
});

test('a class with too few runs says so and shows the coarser band', () => {
  // QLoRA with torchtune on one GPU: few published runs of its own (4 in the bundled set).
  const scenario = JSON.stringify({ model: 'meta-llama/Llama-3.2-1B-Instruct',
    training: { method: 'qlora', framework: 'torchtune' } });
  const out = gpumem(['estimate', '--scenario', '-', '--json'], scenario);
  assert.equal(out.status, 0, out.stderr);
  const b = JSON.parse(out.stdout).per_gpu.band;
  assert.equal(b.too_few_runs, true);
  assert.notEqual(b.level, 'class');
  assert.match(b.note, /too few measured runs like this \(\d+;/);
  const text = gpumem(['estimate', '--scenario', '-'], scenario).stdout;
  assert.match(text, /error band: .*; too few runs like this \(\d+\)/);
});

test('the verdict has three states; fits and the exit codes of check stay the point\'s', () => {
  const over = JSON.parse(gpumem(['estimate', '--model', 'meta-llama/Llama-3.1-70B-Instruct', '--gpu', 'RTX-4090-24GB', '--json']).stdout);
  assert.equal(over.fits, false);
  assert.equal(over.verdict, 'does_not_fit');
  const text = gpumem(['estimate', '--model', 'meta-llama/Llama-3.1-70B-Instruct', '--gpu', 'RTX-4090-24GB']).stdout;
  assert.match(text, /^fits: NO/m);
});

test('calibrate records leave-one-out residuals; --calibration draws the band from them', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gpumem-bands-'));
  const base = JSON.parse(gpumem(['estimate', '--model', 'meta-llama/Llama-3.2-1B-Instruct', '--method', 'lora',
    '--batch-size', '1', '--json']).stdout);
  const records = [1, 2, 3, 4].map((bs, i) => {
    const s = { ...base.scenario, training: { ...base.scenario.training, batch_size: bs } };
    const e = JSON.parse(gpumem(['estimate', '--scenario', '-', '--json'], JSON.stringify(s)).stdout);
    return { id: `r${i}`, scenario: s, measured: { metric: 'allocated', gib: e.per_gpu.peak_allocated_bytes / 2 ** 30 * (1 + 0.01 * i) } };
  });
  const recFile = join(dir, 'records.jsonl'), calFile = join(dir, 'cal.json');
  writeFileSync(recFile, records.map((r) => JSON.stringify(r)).join('\n') + '\n');
  const fitted = gpumem(['calibrate', recFile, '--out', calFile]);
  assert.equal(fitted.status, 0, fitted.stderr);
  const cal = JSON.parse(readFileSync(calFile, 'utf8'));
  assert.equal(cal.residuals.length, 4);
  const out = gpumem(['estimate', '--scenario', '-', '--calibration', calFile], JSON.stringify(base.scenario));
  assert.equal(out.status, 0, out.stderr);
  // The scenario is record r0's own: its run is left out, the other three draw the band.
  assert.match(out.stdout, /error band: .*all 3 of your calibration's runs: /);
  const j = JSON.parse(gpumem(['estimate', '--scenario', '-', '--calibration', calFile, '--json'], JSON.stringify(base.scenario)).stdout);
  assert.equal(j.per_gpu.band.origin, 'calibration');
  assert.equal(j.per_gpu.band.excluded_self, 1);
  assert.ok(j.per_gpu.band.high_bytes - j.per_gpu.band.low_bytes <
    base.per_gpu.band.high_bytes - base.per_gpu.band.low_bytes, 'the user\'s runs narrow the band');
});
