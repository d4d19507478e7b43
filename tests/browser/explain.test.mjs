// "Why these figures" in the page (issue #20, part 3), driven by real mouse input and checked against
// the native CLI on the page's own scenario: the default page (Llama-3.1-8B, full fine-tuning, one
// H100) opens the explanation, then the weights and the optimizer states, and each line drawn is the
// line `gpumem estimate --json`'s "explain" gives for that scenario (formula, numbers, source);
// every term's bytes add up to the component the breakdown shows. Then the page goes to serving
// with vLLM and the KV cache's rule is the CLI's. Screenshots: tests/browser/out/explain-*.png.
//
//   GPUMEM_CLI=build/native/core/cli/gpumem node --test tests/browser/explain.test.mjs

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';

import { click, cliPath as cli, outDir, pageSuite, reveal, until } from './harness.mjs';

const VIEWPORT = { width: 1280, height: 800 };
const { problems, openPage } = pageSuite(VIEWPORT);

function estimate(scenario) {
  const r = spawnSync(cli, ['estimate', '--scenario', '-', '--json', '--explain'],
    { input: JSON.stringify(scenario), encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}

// The lines the page draws for one figure, from the CLI's JSON (ExplainFigure in ui/panel_results.cpp
// draws them in this order).
function figureLines(key, f) {
  const lines = [`${key} = ${f.text}: ${f.what}`];
  if (f.kind !== 'sum') lines.push(f.formula);
  if (f.kind === 'product') lines.push(`= ${f.with}`);
  for (const p of f.parts ?? []) lines.push(`+ ${p.name}: ${p.with}`);
  for (const i of f.inputs ?? []) lines.push(`${i.name} = ${i.text}`);
  for (const s of f.scaled_by ?? []) lines.push(`${s.divides ? '÷' : '×'} ${s.name} = ${s.text}`);
  if (f.source) lines.push(`source: ${f.source}`);
  return lines;
}

const componentLines = (result, component) =>
  result.explain.peak[component].flatMap((t) => figureLines(t.figure, result.explain.figures[t.figure]));



test('why these figures: each component opens to the CLI\'s figures, with this scenario\'s numbers', async () => {
  const page = await openPage();
  const state = () => page.evaluate(() => window.gpumem.uiState());

  assert.deepEqual((await state()).explain_shown, {}, 'closed until asked');
  await reveal(page, 'why_header');
  await click(page, 'why_header');
  for (const component of ['weights', 'optimizer_states']) {
    await reveal(page, `why_${component}`);
    await click(page, `why_${component}`);
  }
  const shown = (await until(page, 'two components open', (s) => s.explain_shown.weights && s.explain_shown.optimizer_states))
    .explain_shown;
  const scenario = await page.evaluate(() => window.gpumem.uiScenario());
  const cli = estimate(scenario);
  assert.deepEqual(shown.weights, componentLines(cli, 'weights'), 'the weights: the CLI\'s figures, line for line');
  assert.deepEqual(shown.optimizer_states, componentLines(cli, 'optimizer_states'));
  // Full fine-tuning of Llama-3.1-8B: 8,030,261,248 parameters, as the weights' line says.
  assert.ok(shown.weights.some((l) => l.includes('8,030,261,248 params')), shown.weights.join('\n'));
  // Every term adds up to the component the breakdown draws.
  for (const [component, bytes] of Object.entries(cli.per_gpu.components)) {
    const terms = cli.explain.peak[component] ?? [];
    const sum = terms.reduce((s, t) => s + t.bytes, 0);
    assert.ok(Math.abs(sum - bytes) <= 2, `${component}: ${sum} vs ${bytes}`);
  }
  const total = await page.evaluate(() => window.gpumem.uiTotal());
  assert.equal(total.bytes, cli.per_gpu.device_total_bytes);
  await reveal(page, 'why_weights');
  await page.screenshot({ path: join(outDir, 'explain-1280x800.png') });

  // The phases, each by the figures it adds up.
  await reveal(page, 'why_phases');
  await click(page, 'why_phases');
  const phases = (await until(page, 'the phases open', (s) => s.explain_shown.phases)).explain_shown.phases;
  const labels = {
    weights: 'Weights', gradients: 'Gradients', optimizer_states: 'Optimizer states', activations: 'Activations',
    logits: 'Logits', kv_cache: 'KV cache', temporaries: 'Temporaries',
  };
  let expected = 0;
  for (const phase of cli.per_gpu.timeline)
    for (const [component, terms] of Object.entries(cli.explain.phases[phase.phase])) {
      if (terms.length === 0) continue;
      const line = new RegExp(`^${labels[component]}: ${terms.map((t) => `${t.figure} [\\d.]+ \\S+`).join(' \\+ ')}$`);
      assert.ok(phases.some((l) => line.test(l)), `${phase.phase} ${component}: ${line}\n${phases.join('\n')}`);
      expected++;
    }
  assert.equal(phases.length, expected + cli.per_gpu.timeline.length, 'a head line per phase, a line per component');

  // Serving with vLLM: the KV cache's rule (what the engine's share of the card leaves) is the CLI's.
  await reveal(page, 'mode_inference', 0.25);
  const before = (await page.evaluate(() => window.gpumem.uiTotal())).estimates;
  await click(page, 'mode_inference');
  await page.waitForFunction((n) => window.gpumem.uiTotal().estimates > n, before);
  const served = estimate(await page.evaluate(() => window.gpumem.uiScenario()));
  if (served.per_gpu.components.kv_cache > 0) {
    await reveal(page, 'why_kv_cache');
    await click(page, 'why_kv_cache');
    const kv = (await until(page, 'the KV cache open', (s) => s.explain_shown.kv_cache)).explain_shown.kv_cache;
    assert.deepEqual(kv, componentLines(served, 'kv_cache'));
    await page.screenshot({ path: join(outDir, 'explain-serving-1280x800.png') });
  }
  await page.close();
});

test('no console errors or page errors', () => {
  assert.deepEqual(problems, []);
});
