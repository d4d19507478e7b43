// Issue #27 in the page: a framework's release that allocated otherwise (training.framework_version) is a
// control, "Release" beside "Framework", picked with the mouse; picking torchtune 0.1 with the framework left
// at its default runs torchtune's 0.1 recipe, the CLI's figure for the same scenario. A link that names a
// release opens "More", where the control is.
//
//   GPUMEM_CLI=build/native/core/cli/gpumem GPUMEM_SITE_DIR=build/wasm/site node --test tests/browser/release.test.mjs
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';

import { cliPath, click, outDir, pageSuite, reveal, until } from './harness.mjs';

const VIEWPORT = { width: 1280, height: 800 };
const CONTROLS = 0.25;  // the wheel over the controls column
const { problems, openPage } = pageSuite(VIEWPORT);

const scenarioOf = (page) => page.evaluate(() => window.gpumem.uiScenario());
const cliEstimate = (scenario) => JSON.parse(execFileSync(cliPath, ['estimate', '--scenario', '-', '--json'],
  { input: JSON.stringify(scenario), encoding: 'utf8' }));
const b64 = (value) => Buffer.from(JSON.stringify(value)).toString('base64url');

test('picking torchtune 0.1 as the release runs its recipe, the CLI\'s figure', async () => {
  const page = await openPage('?model=meta-llama/Llama-2-7b-hf');
  await until(page, 'the verdict', (s) => s.texts?.verdict);
  const before = (await page.evaluate(() => window.gpumem.uiTotal())).bytes;
  await reveal(page, 'framework_version', CONTROLS);
  await click(page, 'framework_version');
  await page.screenshot({ path: join(outDir, 'release-combo-1280x800.png') });
  await click(page, 'framework_version_torchtune_0.1');
  const scenario = await scenarioOf(page);
  assert.equal(scenario.training.framework_version, 'torchtune_0.1');
  assert.equal(scenario.training.framework, undefined, 'the framework is left to the release');
  const r = cliEstimate(scenario);
  assert.equal(r.scenario.training.framework, 'torchtune');
  assert.notEqual(r.per_gpu.device_total_bytes, before, 'torchtune 0.1 allocates otherwise than today\'s default');
  let shown = before;
  for (let i = 0; i < 100 && shown !== r.per_gpu.device_total_bytes; i++) {
    await page.waitForTimeout(50);
    shown = (await page.evaluate(() => window.gpumem.uiTotal())).bytes;
  }
  assert.equal(shown, r.per_gpu.device_total_bytes);
  await page.close();
});

test('a link naming a release opens "More" on it', async () => {
  const link = { version: 1, training: { method: 'lora', framework_version: 'torchtune_0.1' } };
  const page = await openPage(`?model=meta-llama/Llama-2-7b-hf&s=${b64(link)}`);
  await until(page, 'More opened', (s) => s.texts?.verdict && s.more_open === true);
  const scenario = await scenarioOf(page);
  assert.equal(scenario.training.framework_version, 'torchtune_0.1');
  assert.equal((await page.evaluate(() => window.gpumem.uiTotal())).bytes, cliEstimate(scenario).per_gpu.device_total_bytes);
  await page.close();
});

test('no console errors or page errors', () => {
  assert.deepEqual(problems, []);
});
