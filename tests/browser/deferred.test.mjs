// The decision panels are computed after the first frame (issue #29): the first frame draws the
// estimate alone; each later frame runs at most one panel's computation; a drag costs one estimate
// per frame and the panels catch up once, after it. What the panels then show must be exactly what
// the core gives when called at once on the same scenario (window.gpumem.fit, maxfit, sweep,
// exportConfig: the same module, called directly).
//
//   GPUMEM_CLI=build/native/core/cli/gpumem node --test tests/browser/deferred.test.mjs

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { click, frames, pageSuite, rect, reveal, until } from './harness.mjs';

const VIEWPORT = { width: 1280, height: 800 };
const suite = pageSuite(VIEWPORT);
const { problems, openPage } = suite;

const uiScenario = (page) => page.evaluate(() => window.gpumem.uiScenario());

// An answer without its wall-clock times (search.elapsed_ms): they differ from run to run.
function withoutTimes(value) {
  if (Array.isArray(value)) return value.map(withoutTimes);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).filter(([k]) => k !== 'elapsed_ms').map(([k, v]) => [k, withoutTimes(v)]));
}

// The page keeps fit's answer less its estimates (ui/decisions.cpp, UpdateFit); so does this.
function withoutEstimates(fit) {
  const { estimate, ...rest } = fit;
  for (const list of ['suggestions', 'savings'])
    if (Array.isArray(rest[list])) rest[list] = rest[list].map(({ estimate: _, ...s }) => s);
  return withoutTimes(rest);
}

test('the first frame draws the estimate alone; fit follows, equal to an immediate call', async () => {
  const page = await openPage();
  const state = await until(page, 'the panels ready', (s) => s.decisions.ready && s.decisions.fit_count >= 1);
  assert.ok(state.decisions.fit_frame >= 2, `fit ran in frame ${state.decisions.fit_frame}, not after the first`);
  const scenario = await uiScenario(page);
  const eager = await page.evaluate((s) => window.gpumem.fit(s), scenario);
  assert.equal(eager.ok, true, JSON.stringify(eager).slice(0, 300));
  assert.deepEqual(withoutTimes(state.decisions.fit), withoutEstimates(eager), 'the deferred fit is the immediate one');
  assert.equal((await page.evaluate(() => window.gpumem.uiTotal())).decisions_ready, true);
  assert.deepEqual(problems, []);
  await page.close();
});

// What the page showed in its first frame: read in the microtask that resolves window.gpumemReady,
// before the next frame can run (an init script traps page.js's assignment of the promise).
function recordFirstFrame() {
  let ready;
  Object.defineProperty(window, 'gpumemReady', {
    configurable: true,
    get: () => ready,
    set(promise) {
      ready = promise;
      promise.then(() => {
        try {
          window.firstFrameSeen = { scenario: window.gpumem.uiScenario(), total: window.gpumem.uiTotal() };
        } catch (error) {
          window.firstFrameSeen = { error: String(error) };  // e.g. no scenario estimated yet
        }
      });
    },
  });
}

test('a link opens in the first frame: its scenario estimated once, before that frame', async () => {
  const link = { mode: 'training', training: { method: 'lora', batch_size: 4, seq_len: 4096, lora: { rank: 16 } } };
  const page = await suite.browser.context.newPage();
  await page.setViewportSize(VIEWPORT);
  await page.addInitScript(recordFirstFrame);
  await page.goto(`${suite.baseUrl}?model=Qwen/Qwen3-8B&s=${Buffer.from(JSON.stringify(link)).toString('base64url')}`);
  await page.evaluate(() => window.gpumemReady);
  const first = await page.evaluate(() => window.firstFrameSeen);
  assert.ok(first && !first.error, `the first frame was recorded: ${first?.error}`);
  assert.equal(first.scenario.model.preset, 'Qwen/Qwen3-8B', 'the first frame shows the link\'s model, not the default');
  assert.equal(first.scenario.training.batch_size, 4);
  assert.equal(first.scenario.training.seq_len, 4096);
  assert.equal(first.total.estimates, 1, 'one estimate before the first frame');
  const inPage = await page.evaluate((s) => window.gpumem.estimate(s), first.scenario);
  assert.equal(first.total.bytes, inPage.per_gpu.device_total_bytes, 'the first frame\'s headline is the link\'s estimate');
  // The decision panels follow without estimating the same scenario again.
  const state = await until(page, 'the panels ready', (s) => s.decisions.ready && s.decisions.fit_count >= 1);
  assert.equal(state.decisions.fit_frame, 2, 'fit ran in the frame after the first');
  assert.equal((await page.evaluate(() => window.gpumem.uiTotal())).estimates, 1, 'no second estimate');
  assert.deepEqual(problems, []);
  await page.close();
});

test('panels opened later take their turns and equal immediate calls', async () => {
  const page = await openPage();
  for (const header of ['sweep_header', 'export_header', 'planner_header']) {
    await reveal(page, header);
    await click(page, header);
  }
  const state = await until(page, 'every open panel ready',
    (s) => s.decisions.ready && s.decisions.sweep.count >= 1 && s.decisions.export !== null && s.maxfit !== null, 30000);
  const scenario = await uiScenario(page);

  const maxfit = await page.evaluate((s) => window.gpumem.maxfit(s), scenario);
  assert.deepEqual(withoutTimes(state.maxfit), withoutTimes(maxfit), 'max-fit');

  const format = state.decisions.export_format;
  const { scenario: _s, estimate: _e, ...exported } =
    await page.evaluate((r) => window.gpumem.exportConfig(r), { format, scenario });
  assert.deepEqual(withoutTimes(state.decisions.export), withoutTimes(exported), `the ${format} export`);

  for (const [name, field] of [['size', 'training.seq_len'], ['batch', 'training.batch_size']]) {
    const sweep = await page.evaluate((r) => window.gpumem.sweep(r), { scenario, field });
    assert.equal(state.decisions.sweep[name].field, field);
    assert.equal(state.decisions.sweep[name].max_fit, sweep.max_fit, `${field}: max fit`);
    assert.equal(state.decisions.sweep[name].points, sweep.points.length, `${field}: points`);
  }
  assert.deepEqual(problems, []);
  await page.close();
});

test('a drag estimates each frame and runs fit once, after the mouse is released', async () => {
  const page = await openPage();
  let state = await until(page, 'the first fit', (s) => s.decisions.ready && s.decisions.fit_count >= 1);
  const fits = state.decisions.fit_count;
  const estimates = (await page.evaluate(() => window.gpumem.uiTotal())).estimates;

  const slider = await rect(page, 'batch_size');  // under More: opened as a user opens it
  const y = slider.y + slider.h / 2;
  await page.mouse.move(slider.x + 4, y);
  await frames(page, 2);
  await page.mouse.down();
  for (let i = 1; i <= 20; i++) {
    await page.mouse.move(slider.x + 4 + (slider.w * 0.6 * i) / 20, y);
    await frames(page, 1);
  }
  state = await page.evaluate(() => window.gpumem.uiState());
  assert.equal(state.decisions.fit_count, fits, 'no fit while the mouse is down');
  assert.equal(state.decisions.ready, false, 'the fit panel waits (computing...)');
  const during = (await page.evaluate(() => window.gpumem.uiTotal())).estimates - estimates;
  assert.ok(during >= 2, `the headline follows the drag (${during} estimates)`);

  await page.mouse.up();
  state = await until(page, 'the fit after the drag', (s) => s.decisions.ready);
  assert.equal(state.decisions.fit_count, fits + 1, 'one fit for the whole drag');
  const eager = await page.evaluate((s) => window.gpumem.fit(s), await uiScenario(page));
  assert.deepEqual(withoutTimes(state.decisions.fit), withoutEstimates(eager), 'and it is the fit of where the drag ended');
  assert.deepEqual(problems, []);
  await page.close();
});
