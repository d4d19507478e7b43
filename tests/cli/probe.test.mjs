// tools/probe/probe.py, the measurement probe (issue #19): its GPU run is never exercised here (no
// test machine has a GPU); what runs is its help, its CPU-only parameter-count check when torch and
// transformers are installed (else it says why it skips), its refusal without a CUDA device, and its
// record writer, whose records `gpumem calibrate` must accept.
// PYTHON picks the interpreter (default python3 on PATH).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const cli = process.env.GPUMEM_CLI || join(root, 'build/native/core/cli/gpumem');
const python = process.env.PYTHON || 'python3';
const probe = join(root, 'tools/probe/probe.py');
const dir = mkdtempSync(join(tmpdir(), 'gpumem-probe-'));

const hasPython = spawnSync(python, ['--version'], { encoding: 'utf8' }).status === 0;
const run = (args, opts = {}) =>
  spawnSync(python, [probe, ...args], { encoding: 'utf8', env: { ...process.env, GPUMEM_CLI: cli }, ...opts });

test('probe.py --help names its modes', { skip: !hasPython && `${python} not found` }, () => {
  const out = run(['--help']);
  assert.equal(out.status, 0, out.stderr);
  for (const flag of ['--scenario', '--check-counts', '--selftest', '--steps', '--out', '--gpumem']) assert.match(out.stdout, new RegExp(flag));
});

test('--check-counts matches gpumem params for every preset, or says why it skips', { skip: !hasPython && `${python} not found`, timeout: 20 * 60e3 }, (t) => {
  const out = run(['--check-counts'], { timeout: 20 * 60e3 });
  const first = out.stdout.split('\n')[0];
  if (first.startsWith('skipped:')) {
    assert.equal(out.status, 0, out.stderr);
    assert.match(first, /torch|transformers|accelerate/, 'the reason names the missing package');
    t.skip(first);
    return;
  }
  assert.equal(out.status, 0, `counts differ:\n${out.stdout}\n${out.stderr}`);
  assert.match(out.stdout, / match, 0 differ/);
});

test('--scenario without a CUDA device exits 2 and says so', { skip: !hasPython && `${python} not found` }, (t) => {
  const torch = spawnSync(python, ['-c', 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 3)']);
  if (torch.status === 0) return t.skip('this machine has a CUDA device: the probe would run');
  const file = join(dir, 'run.json');
  writeFileSync(file, JSON.stringify({ version: 1, model: { preset: 'HuggingFaceTB/SmolLM2-135M-Instruct' },
    training: { batch_size: 1, seq_len: 128 } }));
  const out = run(['--scenario', file]);
  assert.equal(out.status, 2, out.stderr);
  assert.match(out.stderr, /^probe: (no CUDA device|torch is not installed)/);
  assert.equal(out.stdout, '', 'no record without a measurement');
});

test('--scenario refuses a multi-GPU layout, naming the fields', { skip: !hasPython && `${python} not found` }, () => {
  const file = join(dir, 'fsdp.json');
  writeFileSync(file, JSON.stringify({ version: 1, model: { preset: 'meta-llama/Llama-3.1-8B' },
    parallelism: { data_parallel_size: 8 }, engine: { type: 'fsdp' }, hardware: { num_gpus: 8 } }));
  const out = run(['--scenario', file]);
  assert.equal(out.status, 2, out.stderr);
  for (const field of ['parallelism.data_parallel_size = 8', 'hardware.num_gpus = 8', 'engine.type = "fsdp"']) assert.ok(out.stderr.includes(field), out.stderr);
});

test('the records it writes are what gpumem calibrate reads', { skip: !hasPython && `${python} not found` }, () => {
  const file = join(dir, 'selftest.jsonl');
  const out = run(['--selftest', '--id', 'st', '--out', file]);
  assert.equal(out.status, 0, out.stderr);
  const again = run(['--selftest', '--id', 'st']);  // the same records on stdout
  const recs = again.stdout.trim().split('\n').map((l) => JSON.parse(l));
  assert.deepEqual(recs.map((r) => r.id), ['st-allocated', 'st-reserved', 'st-device_total']);
  for (const r of recs) {
    assert.deepEqual(Object.keys(r.measured).sort(), ['gib', 'metric']);
    assert.ok(r.measured.gib > 0);
    assert.equal(r.scenario.overheads, undefined, 'no pinned overheads: calibrate fits them');
    assert.equal(typeof r.environment.gpumem, 'string');
  }
  const cal = spawnSync(cli, ['calibrate', file, '--json'], { encoding: 'utf8' });
  assert.equal(cal.status, 0, cal.stderr || cal.stdout);
  const doc = JSON.parse(cal.stdout);
  assert.equal(doc.ok, true);
  assert.deepEqual(doc.calibration.records.map((r) => r.id), ['st-allocated', 'st-reserved', 'st-device_total']);
  assert.equal(doc.report.before.all.n, 3);
});
