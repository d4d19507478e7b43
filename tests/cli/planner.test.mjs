// Black-box tests of `gpumem maxfit` and `gpumem plan` (README.md, "Planner"): exit codes, the
// JSON contract, the boundary of the max-fit solvers checked through `gpumem estimate`, and
// messages that name the field.
//
//   GPUMEM_CLI=path/to/gpumem node --test tests/cli/
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..', '..');
const cli = path.resolve(repo, process.env.GPUMEM_CLI || 'build/native/core/cli/gpumem');
if (!fs.existsSync(cli)) throw new Error(`gpumem CLI not found at ${cli}: build it (./make.sh test) or set GPUMEM_CLI`);

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gpumem-planner-test-'));
process.on('exit', () => fs.rmSync(tmp, { recursive: true, force: true }));

function run(args, input) {
  const r = spawnSync(cli, args, { input: input ?? '', encoding: 'utf8', timeout: 60_000, maxBuffer: 64 << 20 });
  if (r.error) throw r.error;
  return { code: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}
function expectExit(r, code, what) {
  assert.equal(r.signal, null, `${what}: killed by ${r.signal}`);
  assert.equal(r.code, code, `${what}: exit ${r.code}, expected ${code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
}
function writeTmp(name, content) {
  const file = path.join(tmp, name);
  fs.writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
  return file;
}

const training = writeTmp('train.json', {
  model: { preset: 'meta-llama/Llama-3.1-8B' },
  training: { seq_len: 4096, activation_checkpointing: 'full' },
  engine: { type: 'fsdp' },
  parallelism: { data_parallel_size: 8 },
});
const serving = writeTmp('serve.json', {
  model: { preset: 'meta-llama/Llama-3.1-8B' }, mode: 'inference',
  inference: { engine: 'vllm', context_len: 8192, batch_size: 8 },
});

describe('maxfit', () => {
  for (const [what, file, section] of [['training', training, 'training'], ['vLLM serving', serving, 'inference']]) {
    test(`${what}: each value fits and one more does not (checked with estimate)`, () => {
      const r = run(['maxfit', '--scenario', file, '--json']);
      expectExit(r, 0, 'maxfit --json');
      const out = JSON.parse(r.stdout);
      assert.equal(out.ok, true);
      assert.equal(out.solvers.length, 2);
      const doc = JSON.parse(fs.readFileSync(file, 'utf8'));
      for (const s of out.solvers) {
        assert.ok(s.value > 0, JSON.stringify(s));
        assert.equal(s.limited_by, 'memory');
        const key = s.field.split('.')[1];
        for (const [n, fits] of [[s.value, true], [s.value + 1, false]]) {
          const scenario = structuredClone(doc);
          scenario[section][key] = n;
          const e = run(['estimate', '--scenario', writeTmp(`at-${key}-${n}.json`, scenario), '--json']);
          expectExit(e, 0, `estimate at ${s.field} = ${n}`);
          assert.equal(JSON.parse(e.stdout).fits, fits, `${s.field} = ${n}`);
        }
      }
    });
  }

  test('the table names the fields and the sizes either side of the boundary', () => {
    const r = run(['maxfit', '--scenario', training]);
    expectExit(r, 0, 'maxfit');
    assert.match(r.stdout, /training\.batch_size\s+\d+\s+\([\d.]+ GiB; \d+ needs [\d.]+ GiB\)/);
    assert.match(r.stdout, /training\.seq_len\s+\d+/);
  });

  test('flags build the scenario as for estimate', () => {
    const r = run(['maxfit', '--model', 'llama3-8b', '--mode', 'inference', '--context-len', '4096', '--json']);
    expectExit(r, 0, 'maxfit --model');
    assert.equal(JSON.parse(r.stdout).mode, 'inference');
  });

  test('invalid input exits 1 naming the field; no scenario is a usage error', () => {
    const bad = run(['maxfit', '--scenario', writeTmp('bad.json', { model: { preset: 'llama3-8b' }, training: { batch_size: -4 } })]);
    expectExit(bad, 1, 'maxfit with batch_size -4');
    assert.match(bad.stderr, /training\.batch_size: must be a positive integer, got -4/);
    expectExit(run(['maxfit']), 2, 'maxfit with no scenario');
  });
});

describe('plan', () => {
  test('--json: ranked rows, each with its layout, step time and estimate', () => {
    const r = run(['plan', '--scenario', training, '--gpus', '16', '--gpu', 'H100-80GB', '--global-batch', '64', '--top', '5', '--json']);
    expectExit(r, 0, 'plan --json');
    const out = JSON.parse(r.stdout);
    assert.equal(out.ok, true);
    assert.equal(out.cluster.num_gpus, 16);
    assert.equal(out.cluster.gpus_per_node, 8);
    assert.equal(out.plans.length, 5);
    out.plans.forEach((p, i) => {
      assert.equal(p.rank, i + 1);
      if (i) assert.ok(out.plans[i - 1].step_time_s <= p.step_time_s);
      const l = p.layout;
      assert.equal(l.data_parallel_size * l.tensor_parallel_size * l.pipeline_parallel_size * l.context_parallel_size, 16);
      assert.equal(l.data_parallel_size * l.micro_batch_size * l.gradient_accumulation_steps, 64);
      assert.equal(p.estimate.ok, true);
      assert.equal(p.estimate.fits, true);
      assert.equal(p.estimate.per_gpu.device_total_bytes, p.device_total_bytes);
      assert.ok(p.step_time.compute_s > 0 && p.step_time_s >= p.step_time.compute_s);
    });
    assert.ok(out.constants.mfu.about.length > 20, 'each constant says where it comes from');
  });

  test('a row re-estimated through `gpumem estimate` fits with the same bytes', () => {
    const r = run(['plan', '--scenario', training, '--gpus', '16', '--top', '1', '--json']);
    expectExit(r, 0, 'plan');
    const row = JSON.parse(r.stdout).plans[0];
    const e = run(['estimate', '--scenario', writeTmp('row.json', row.scenario), '--json']);
    expectExit(e, 0, 'estimate of the top row');
    const est = JSON.parse(e.stdout);
    assert.equal(est.fits, true);
    assert.equal(est.per_gpu.device_total_bytes, row.device_total_bytes);
  });

  test('the same request gives the same ranking', () => {
    const args = ['plan', '--model', 'llama3-8b', '--seq-len', '2048', '--gpus', '32', '--top', '30', '--json'];
    const a = JSON.parse(run(args).stdout), b = JSON.parse(run(args).stdout);
    assert.deepEqual(a.plans.map((p) => p.layout), b.plans.map((p) => p.layout));
  });

  test('the table: one line per row, fastest first', () => {
    const r = run(['plan', '--scenario', serving, '--gpus', '8', '--top', '3']);
    expectExit(r, 0, 'plan (table)');
    assert.match(r.stdout, /plan: 8 x H100-80GB/);
    assert.equal(r.stdout.split('\n').filter((l) => /^\s+[123]\s+\d+\s+\d+\s+\d+\s/.test(l)).length, 3);
  });

  test('--mfu scales the compute term: half the MFU, twice the compute time of the same layout', () => {
    const at = (mfu) => JSON.parse(run(['plan', '--scenario', training, '--gpus', '8', '--top', '50', '--mfu', mfu, '--json']).stdout);
    const a = at('0.5'), b = at('0.25');
    assert.equal(a.constants.mfu.value, 0.5);
    assert.equal(b.constants.mfu.value, 0.25);
    assert.equal(b.cluster.global_batch_size, a.cluster.global_batch_size);
    // The same layout at both MFUs (the ranking may change with it): compute_s = FLOPs / (peak x MFU).
    const top = a.plans[0];
    const same = b.plans.find((p) => JSON.stringify(p.layout) === JSON.stringify(top.layout));
    assert.ok(same, `the layout ${JSON.stringify(top.layout)} is among the plans at MFU 0.25`);
    assert.ok(Math.abs(same.step_time.compute_s / top.step_time.compute_s - 2) < 1e-9,
      `${same.step_time.compute_s} s at 0.25 vs ${top.step_time.compute_s} s at 0.5`);
  });

  test('--bench prints evaluations per second and plan time', () => {
    const r = run(['plan', '--scenario', training, '--gpus', '16', '--bench', '3']);
    expectExit(r, 0, 'plan --bench');
    const b = JSON.parse(r.stdout);
    assert.equal(b.rounds, 3);
    assert.ok(b.evaluations > 0 && b.evaluations_per_s_median > 0 && b.plan_ms_median > 0);
  });

  test('usage and invalid input', () => {
    expectExit(run(['plan', '--scenario', training]), 2, 'plan without --gpus');
    const gpu = run(['plan', '--scenario', training, '--gpus', '8', '--gpu', 'H900']);
    expectExit(gpu, 1, 'unknown GPU');
    assert.match(gpu.stderr, /plan\.gpu: is not in the GPU catalogue/);
    const zero = run(['plan', '--scenario', training, '--gpus', '0', '--json']);
    expectExit(zero, 1, '--gpus 0');
    assert.equal(JSON.parse(zero.stdout).errors[0].field, 'plan.num_gpus');
    const top = run(['plan', '--scenario', training, '--gpus', '8', '--top', 'many']);
    expectExit(top, 1, '--top many');
    assert.match(top.stderr, /plan\.top/);
    const malformed = run(['plan', '--scenario', writeTmp('malformed.json', '{"model": '), '--gpus', '8']);
    expectExit(malformed, 1, 'malformed scenario');
    assert.match(malformed.stderr, /malformed JSON/);
    expectExit(run(['plan', '--scenario', training, '--gpus', '8', '--top']), 2, '--top without a value');
  });
});
