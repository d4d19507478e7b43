// The planner panel in the page, driven by real mouse and keyboard input: the max-fit answers and
// the plan rows equal the CLI's for the page's own scenario, the cluster size is typed, and one
// click on a row's Load puts that layout into the calculator, whose headline then equals the
// row's per-GPU figure. Screenshot: tests/browser/out/planner-1280x800.png.
//
//   node --test tests/browser/planner.test.mjs

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';

import {
  click, cliPath as cli,
  outDir, pageSuite, replaceDigits, reveal, until,
} from './harness.mjs';

const VIEWPORT = { width: 1280, height: 800 };

const { problems, openPage } = pageSuite(VIEWPORT);

function runCli(args, input) {
  return JSON.parse(execFileSync(cli, args, { input, encoding: 'utf8' }));
}


// Types `value` over an integer field's `current` digits and waits for the plan it asks for.
async function typeNumber(page, name, value, current) {
  const count = (await page.evaluate(() => window.gpumem.uiState())).plan.count;
  await replaceDigits(page, name, value, current);
  return until(page, `a new plan after typing ${value}`, (s) => s.plan.count > count);
}

function layoutKey(row) {
  const { layout } = row;
  return JSON.stringify(layout);
}



test('the planner answers as the CLI does, and a row loads into the calculator with one click', async () => {
  // LoRA of Llama-3.1-8B, 2k tokens, through a share link (s= is the scenario, base64url).
  const shared = { training: { method: 'lora', seq_len: 2048 } };
  const page = await openPage(`?model=meta-llama/Llama-3.1-8B&s=${Buffer.from(JSON.stringify(shared)).toString('base64url')}`);
  assert.equal((await page.evaluate(() => window.gpumem.uiScenario())).training.method, 'lora');
  await reveal(page, 'planner_header');
  await click(page, 'planner_header');
  let state = await until(page, 'the first plan', (s) => s.plan.count >= 1 && s.maxfit.ok !== undefined);

  // Max fit: the page's answer is the CLI's for the page's own scenario.
  const scenario = JSON.stringify(await page.evaluate(() => window.gpumem.uiScenario()));
  const maxfit = runCli(['maxfit', '--scenario', '-', '--json'], scenario);
  assert.equal(state.maxfit.ok, true, JSON.stringify(state.maxfit));
  assert.deepEqual(state.maxfit.solvers.map((s) => [s.field, s.value, s.device_total_bytes]),
    maxfit.solvers.map((s) => [s.field, s.value, s.device_total_bytes]));
  const batch = state.maxfit.solvers.find((s) => s.field === 'training.batch_size');
  assert.ok(batch.value >= 1 && batch.next_device_total_bytes > maxfit.capacity_bytes,
    `the boundary: ${batch.value} fits, one more does not (${JSON.stringify(batch)})`);

  // Sixteen GPUs, typed.
  await reveal(page, 'plan_gpus');
  state = await typeNumber(page, 'plan_gpus', 16, 8);
  assert.ok(state.plan.rows.length >= 3, `rows for 16 GPUs: ${JSON.stringify(state.plan.search)}`);
  for (const row of state.plan.rows) {
    const l = row.layout;
    assert.equal(l.data_parallel_size * l.tensor_parallel_size * l.pipeline_parallel_size * l.context_parallel_size, 16,
      `a row uses the cluster: ${JSON.stringify(l)}`);
    assert.equal(row.estimate.fits, true, `row ${row.rank} fits when estimated`);
  }
  const cliPlan = runCli(['plan', '--scenario', '-', '--gpus', '16', '--gpus-per-node', '8', '--top', '10', '--json'], scenario);
  assert.deepEqual(state.plan.rows.map((r) => [r.rank, layoutKey(r), r.device_total_bytes, r.step_time_s]),
    cliPlan.plans.map((r) => [r.rank, layoutKey(r), r.device_total_bytes, r.step_time_s]),
    'the page ranks the same rows as `gpumem plan`');
  assert.ok(state.plan.ms > 0 && state.plan.ms < 2000, `plan time in the page: ${state.plan.ms} ms`);

  // One click on row 3's Load.
  const row = state.plan.rows[2];
  await reveal(page, 'plan_load_3');
  await page.screenshot({ path: join(outDir, 'planner-1280x800.png') });
  await click(page, 'plan_load_3');
  state = await until(page, 'the loaded row', (s) => /Plan 3 is in the calculator/.test(s.plan.message));
  const loaded = await page.evaluate(() => window.gpumem.uiScenario());
  const p = loaded.parallelism ?? {};
  assert.equal(p.tensor_parallel_size ?? 1, row.layout.tensor_parallel_size);
  assert.equal(p.pipeline_parallel_size ?? 1, row.layout.pipeline_parallel_size);
  assert.equal(p.context_parallel_size ?? 1, row.layout.context_parallel_size);
  assert.equal(loaded.hardware.num_gpus, 16);
  assert.equal(loaded.engine.type, row.layout.engine);
  assert.equal(loaded.training.batch_size, row.layout.micro_batch_size);
  assert.equal(loaded.training.gradient_accumulation_steps ?? 1, row.layout.gradient_accumulation_steps);
  const total = await page.evaluate(() => window.gpumem.uiTotal());
  const estimate = runCli(['estimate', '--scenario', '-', '--json'], JSON.stringify(loaded));
  assert.equal(estimate.per_gpu.device_total_bytes, row.device_total_bytes,
    'the loaded scenario is estimated at the row\'s per-GPU figure');
  assert.equal(total.bytes, row.device_total_bytes, 'the headline shows the row\'s per-GPU figure');
  await page.close();
});

test('inference plans: replicas of a serving layout, and the max-fit concurrency', async () => {
  const page = await openPage('?model=Qwen/Qwen2.5-7B');
  // Switch to inference through the mode control, then open the planner.
  await click(page, 'mode_inference');
  await reveal(page, 'planner_header');
  await click(page, 'planner_header');
  const state = await until(page, 'an inference plan', (s) => s.plan.count >= 1 && s.plan.rows.length > 0);
  const fields = state.maxfit.solvers.map((s) => s.field);
  assert.deepEqual(fields, ['inference.batch_size', 'inference.context_len']);
  for (const row of state.plan.rows) assert.ok(row.layout.max_concurrent_sequences >= row.layout.batch_size, JSON.stringify(row.layout));
  await page.close();
});

test('no console errors or page errors', () => {
  assert.deepEqual(problems, []);
});
