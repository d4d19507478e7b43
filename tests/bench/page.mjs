// Page budgets: what the browser downloads, how soon the first frame is drawn, and how much
// memory the tab holds, for the served page and for the offline bundle. Prints a table; exits 1
// only when the site is missing or a load fails (the budgets are reported, not enforced).
//
//   node tests/bench/page.mjs [--loads 7]
//   env GPUMEM_SITE_DIR (default build/wasm/site), GPUMEM_CHROMIUM (default /usr/bin/chromium)
//
// - transfer: the gzip -9 size of every file the page loaded (what a server that compresses
//   sends; GitHub Pages does), summed; the bundle is one file.
// - first frame: navigation start -> the first frame drawn (window.gpumemReady's firstFrameMs),
//   each load in a fresh browser context (cold cache), headless Chromium with SwiftShader WebGL;
//   the page from web/serve.mjs on 127.0.0.1, the bundle from file://. Split (page.js's
//   window.gpumemTimings): the .wasm downloaded, compiled and instantiated; its static
//   constructors; main() (the catalogues, the first estimate); the first frame (its CPU time is
//   the app's own ui_frame_times()[0], the rest is the browser getting to it and drawing).
// - panels ready: first frame -> every open decision panel current (the app's decisions_ready,
//   polled once a frame: it computes them after the first frame, one a frame).
// - memory, after the first frame: the JS heap in use (CDP Performance.getMetrics
//   JSHeapUsedSize), the WebAssembly linear memory (window.gpumem.wasmMemoryBytes()), and the
//   private memory of the tab's renderer process (pids from CDP SystemInfo.getProcessInfo,
//   bytes from /proc; WebGL itself runs in Chromium's GPU process and is not counted).
// - frame time: the CPU time of one app frame at idle and while dragging a slider.
// - the planner in the page: the wall time of gpumem::plan as the planner panel calls it (the
//   panel times it), for Llama-3.1-70B on 64 GPUs and DeepSeek-V3 on 256 (the scenarios of
//   tests/bench/planner.mjs), the cluster typed into the panel; each sample is one full plan.

import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';

import {
  CHROMIUM_ARGS, chromiumPath, click, rect, replaceDigits, repo as root, reveal, siteDir, startServer, until,
} from '../browser/harness.mjs';

const loadsArg = process.argv.indexOf('--loads');
const loads = loadsArg > 0 ? Number(process.argv[loadsArg + 1]) : 7;

// playwright-core is installed for the browser tests (tests/browser/package-lock.json).
const { chromium } = createRequire(join(root, 'tests', 'browser', 'package.json'))('playwright-core');

const VIEWPORT = { width: 1280, height: 800 };
// The budgets (tests/bench/page_budget.json): the sizes are held by tests/browser/size.test.mjs, the
// times only printed here.
const budget = JSON.parse(readFileSync(join(root, 'tests', 'bench', 'page_budget.json'), 'utf8'));

const KB = 1000;
const MB = 1000 * 1000;
const MiB = 1024 * 1024;
const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((s.length - 1) * q + 0.5))];
};
const gzipSize = (file) => gzipSync(readFileSync(file), { level: 9 }).length;


// The tab's renderer: the renderer process with the most private memory (Chromium starts a
// few small ones beside it). Its private bytes (Private_Clean + Private_Dirty in
// /proc/PID/smaps_rollup) approximate Chrome's "memory footprint" of the tab.
function tabPrivateBytes(processes) {
  let most = 0;
  for (const p of processes.filter((q) => q.type === 'renderer')) {
    try {
      const rollup = readFileSync(`/proc/${p.id}/smaps_rollup`, 'utf8');
      const kb = (key) => Number(rollup.match(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm'))?.[1] ?? 0);
      most = Math.max(most, (kb('Private_Clean') + kb('Private_Dirty')) * 1024);
    } catch { /* gone, or not ours to read */ }
  }
  return most;
}

// One cold load: a fresh context, navigate, wait for the first frame, measure.
async function load(browser, url) {
  const context = await browser.newContext({ viewport: VIEWPORT, deviceScaleFactor: 1 });
  const page = await context.newPage();
  const fetched = new Set();
  page.on('requestfinished', (request) => fetched.add(request.url()));
  const errors = [];
  page.on('pageerror', (error) => errors.push(error.message));
  await page.goto(url);
  const { firstFrameMs } = await page.evaluate(() => window.gpumemReady);
  // The decision panels, computed after the first frame: polled at the start of each frame.
  const readyAt = await page.evaluate(() => new Promise((done) => {
    const step = () => (window.gpumem.uiTotal().decisions_ready ? done(performance.now()) : requestAnimationFrame(step));
    step();
  }));
  const timings = await page.evaluate(() => ({ ...window.gpumemTimings, frame1: window.gpumem.uiFrameTimes()[0] }));
  // Let the page settle (a few frames, a collection) before reading memory.
  await page.evaluate(() => new Promise((done) => {
    let n = 10;
    const step = () => (n-- > 0 ? requestAnimationFrame(step) : done());
    step();
  }));
  const cdp = await context.newCDPSession(page);
  await cdp.send('HeapProfiler.collectGarbage');
  await cdp.send('Performance.enable');
  const { metrics } = await cdp.send('Performance.getMetrics');
  const metric = (name) => metrics.find((m) => m.name === name)?.value ?? 0;
  const wasmBytes = await page.evaluate(() => window.gpumem.wasmMemoryBytes());
  const browserCdp = await browser.newBrowserCDPSession();
  const { processInfo } = await browserCdp.send('SystemInfo.getProcessInfo');
  const tabPrivate = tabPrivateBytes(processInfo);
  await browserCdp.detach();
  await context.close();
  if (errors.length) throw new Error(`${url}: ${errors.join('; ')}`);
  return {
    firstFrameMs, panelsMs: readyAt - firstFrameMs, timings, jsHeap: metric('JSHeapUsedSize'), wasmBytes, tabPrivate,
    fetched: [...fetched],
  };
}

// The start-up steps split: [name, from, to], each a gpumemTimings field or a steps.NAME (page.js).
const STEPS = [
  ['window (WebGL2 context)', 'runtimeMs', 'window'], ['ImGui and its backends', 'window', 'imgui'],
  ['app (catalogues, first estimate)', 'imgui', 'app'], ['first frame: to NewFrame (fonts, shaders)', 'mainMs', 'frame_setup'],
  ['first frame: the app\'s widgets', 'frame_setup', 'frame_app'], ['first frame: drawing it', 'frame_app', 'firstFrameMs'],
];
const stepAt = (timings, key) => timings[key] ?? timings.steps?.[key] ?? NaN;

async function measure(browser, name, url) {
  const runs = [];
  for (let i = 0; i < loads; i++) runs.push(await load(browser, url));
  const times = runs.map((r) => r.firstFrameMs);
  const last = runs[runs.length - 1];
  return {
    name,
    fetched: last.fetched,
    median: quantile(times, 0.5),
    p90: quantile(times, 0.9),
    panels: quantile(runs.map((r) => r.panelsMs), 0.5),
    panelsP90: quantile(runs.map((r) => r.panelsMs), 0.9),
    // Medians of each start-up step (ms): instantiated, static constructors, main(), then the first frame.
    steps: {
      unpack: quantile(runs.map((r) => r.timings.unpackMs ?? 0), 0.5),
      instantiate: quantile(runs.map((r) => r.timings.instantiatedMs), 0.5),
      constructors: quantile(runs.map((r) => r.timings.runtimeMs - r.timings.instantiatedMs), 0.5),
      main: quantile(runs.map((r) => r.timings.mainMs - r.timings.runtimeMs), 0.5),
      frame: quantile(runs.map((r) => r.timings.firstFrameMs - r.timings.mainMs), 0.5),
      frameCpu: quantile(runs.map((r) => r.timings.frame1), 0.5),
    },
    // main()'s and the first frame's own steps (ui/main.cpp, page.js's gpumemTimings.steps), medians (ms).
    parts: Object.fromEntries(STEPS.map(([name, from, to]) =>
      [name, quantile(runs.map((r) => stepAt(r.timings, to) - stepAt(r.timings, from)), 0.5)])),
    jsHeap: quantile(runs.map((r) => r.jsHeap), 0.5),
    wasmBytes: last.wasmBytes,
    tabPrivate: quantile(runs.map((r) => r.tabPrivate), 0.5),
  };
}

// The files under the site that a load fetched (served URLs map to site files).
function transferOf(fetched, baseUrl) {
  const rows = [];
  for (const url of fetched) {
    if (url.startsWith('data:')) continue;
    let file;
    if (url.startsWith('file:')) file = fileURLToPath(url);
    else file = join(siteDir, decodeURIComponent(new URL(url).pathname.slice(new URL(baseUrl).pathname.length)) || 'index.html');
    if (!existsSync(file)) throw new Error(`fetched ${url}, which is not a file of the site`);
    rows.push({ file: file.slice(siteDir.length + 1), raw: readFileSync(file).length, gzip: gzipSize(file) });
  }
  return rows.sort((a, b) => b.gzip - a.gzip);
}

const bundlePath = join(siteDir, 'gpumem-offline.html');
for (const f of ['index.html', 'gpumem-offline.html']) {
  if (!existsSync(join(siteDir, f))) {
    console.error(`page.mjs: no ${f} in ${siteDir}: build it with cmake --build build/wasm --target site`);
    process.exit(1);
  }
}

const { child: server, url: baseUrl } = await startServer();
const browser = await chromium.launch({ executablePath: chromiumPath, headless: true, args: CHROMIUM_ARGS });
// Frame time: the CPU time of one Frame() in the app (ui_frame_times: Dear ImGui's update, the
// estimate when the scenario changed, and recording the draw lists), at idle and while the mouse
// drags the batch-size slider back and forth (one estimate per frame).
async function frameTimes(browser, url) {
  const tab = await browser.newPage({ viewport: VIEWPORT });
  await tab.goto(url);
  await tab.evaluate(() => window.gpumemReady);
  const frames = (n) => tab.evaluate((k) => new Promise((done) => {
    const step = () => (k-- > 0 ? requestAnimationFrame(step) : done());
    step();
  }), n);
  await frames(30);
  await frames(120);
  const idle = (await tab.evaluate(() => window.gpumem.uiFrameTimes())).slice(-120);
  const slider = await rect(tab, 'batch_size');   // under "More", which rect() opens
  const y = slider.y + slider.h / 2;
  await tab.mouse.move(slider.x + 4, y);
  await frames(2);
  await tab.mouse.down();
  const before = (await tab.evaluate(() => window.gpumem.uiTotal())).estimates;
  for (let i = 0; i < 120; i++) {
    const t = (i % 40) / 40;
    await tab.mouse.move(slider.x + 4 + slider.w * 0.8 * (i % 80 < 40 ? t : 1 - t), y);
    await frames(1);
  }
  const dragging = (await tab.evaluate(() => window.gpumem.uiFrameTimes())).slice(-120);
  const estimates = (await tab.evaluate(() => window.gpumem.uiTotal())).estimates - before;
  // After the release the decision panels catch up (fit of where the drag ended), one a frame.
  await tab.mouse.up();
  const waited = await tab.evaluate(() => new Promise((done) => {
    let n = 0;
    const step = () => (window.gpumem.uiTotal().decisions_ready ? done(n) : (n++, requestAnimationFrame(step)));
    requestAnimationFrame(step);
  }));
  const settling = (await tab.evaluate(() => window.gpumem.uiFrameTimes())).slice(-(waited + 2));
  await tab.close();
  return { idle, dragging, estimates, settling };
}

// The planner panel's own timing of gpumem::plan, `rounds` plans of the same cluster: the Rows
// field alternates between 10 and 11, which re-plans without changing the search.
async function planTimes(browser, url, model, seqLen, gpus, globalBatch, rounds = 7) {
  const tab = await browser.newPage({ viewport: VIEWPORT });
  const shared = Buffer.from(JSON.stringify({ training: { seq_len: seqLen } })).toString('base64url');
  await tab.goto(`${url}?model=${encodeURIComponent(model)}&s=${shared}`);
  await tab.evaluate(() => window.gpumemReady);
  await reveal(tab, 'planner_header');
  await click(tab, 'planner_header');
  await reveal(tab, 'plan_gpus');
  await replaceDigits(tab, 'plan_gpus', gpus, 8);
  await reveal(tab, 'plan_global_batch');
  await replaceDigits(tab, 'plan_global_batch', globalBatch, 0);
  const times = [];
  let rows = 10, state;
  for (let i = 0; i < rounds; i++) {
    const next = rows === 10 ? 11 : 10;
    await reveal(tab, 'plan_top');
    await replaceDigits(tab, 'plan_top', next, rows);
    rows = next;
    state = await until(tab, `the plan with ${rows} rows`, (s) => s.plan.rows.length === rows, 60000);
    times.push(state.plan.ms);
  }
  await tab.close();
  return { times, search: state.plan.search };
}

// The first use of what the page fetches when first needed (ui/tools.h, gpumem_tools.wasm): from the
// click that opens "Configs to run" to its config written, on a fresh load each time (nothing cached:
// web/serve.mjs), `rounds` times; the bundle links them in and answers in the next frames.
async function toolsTimes(browser, url, rounds = 5) {
  const times = [];
  for (let i = 0; i < rounds; i++) {
    const tab = await browser.newPage({ viewport: VIEWPORT });
    await tab.goto(url);
    await tab.evaluate(() => window.gpumemReady);
    await until(tab, 'the panels ready', (s) => s.decisions.ready, 30000);
    await reveal(tab, 'export_header');
    const start = Date.now();
    await click(tab, 'export_header');
    await until(tab, 'the config written', (s) => s.decisions.export !== null, 30000);
    times.push(Date.now() - start);
    await tab.close();
  }
  return times;
}

let page, bundle, frameStats, plans, tools, toolsBundle;
try {
  page = await measure(browser, 'page (served)', baseUrl);
  bundle = await measure(browser, 'offline bundle (file://)', pathToFileURL(bundlePath).href);
  frameStats = await frameTimes(browser, baseUrl);
  plans = [
    ['Llama-3.1-70B on 64 x H100, global batch 512', await planTimes(browser, baseUrl, 'meta-llama/Llama-3.1-70B', 4096, 64, 512)],
    ['DeepSeek-V3 on 256 x H100, global batch 1024', await planTimes(browser, baseUrl, 'deepseek-ai/DeepSeek-V3', 4096, 256, 1024)],
  ];
  tools = await toolsTimes(browser, baseUrl);
  toolsBundle = await toolsTimes(browser, pathToFileURL(bundlePath).href);
} finally {
  await browser.close();
  server.kill();
}

const pageFiles = transferOf(page.fetched, baseUrl);
const bundleFiles = transferOf(bundle.fetched, baseUrl);
const sum = (rows, key) => rows.reduce((s, r) => s + r[key], 0);
const pageGzip = sum(pageFiles, 'gzip');

console.log('transfer (gzip -9 of each file the load fetched)');
for (const [name, rows] of [['page', pageFiles], ['bundle', bundleFiles]]) {
  for (const r of rows)
    console.log(`  ${name.padEnd(7)} ${r.file.padEnd(22)} ${(r.raw / KB).toFixed(1).padStart(8)} kB raw` +
      ` ${(r.gzip / KB).toFixed(1).padStart(8)} kB gzip`);
  console.log(`  ${name.padEnd(7)} ${'total'.padEnd(22)} ${(sum(rows, 'raw') / KB).toFixed(1).padStart(8)} kB raw` +
    ` ${(sum(rows, 'gzip') / KB).toFixed(1).padStart(8)} kB gzip`);
}
const bundleGzip = sum(bundleFiles, 'gzip');
const within = (value, limit) => (value <= limit ? 'within' : 'OVER');
console.log(`  budget (held by tests/browser/size.test.mjs): page <= ${(budget.page_gzip_bytes / KB).toFixed(0)} kB gzip: ` +
  `${(pageGzip / KB).toFixed(0)} kB, ${within(pageGzip, budget.page_gzip_bytes)}; bundle <= ` +
  `${(budget.bundle_gzip_bytes / KB).toFixed(0)} kB: ${(bundleGzip / KB).toFixed(0)} kB, ${within(bundleGzip, budget.bundle_gzip_bytes)}`);
console.log(`  aim: page <= ${(budget.aim.page_gzip_bytes / KB).toFixed(0)} kB, bundle <= ${(budget.aim.bundle_gzip_bytes / KB).toFixed(0)} kB`);

console.log(`\nfirst frame (navigation start -> first frame drawn; ${loads} cold loads each; headless Chromium, SwiftShader)`);
console.log('memory after the first frame (medians): JS heap used (CDP), WebAssembly memory, private memory of the tab\'s renderer process (/proc)');
for (const r of [page, bundle]) {
  console.log(`  ${r.name.padEnd(25)} median ${r.median.toFixed(0).padStart(5)} ms  p90 ${r.p90.toFixed(0).padStart(5)} ms` +
    `   JS heap ${(r.jsHeap / MiB).toFixed(1)} MiB  wasm ${(r.wasmBytes / MiB).toFixed(1)} MiB` +
    `  tab process ${(r.tabPrivate / MiB).toFixed(0)} MiB`);
}
console.log(`  budget: first frame <= ${budget.first_frame_ms} ms (median): page ` +
  `${within(page.median, budget.first_frame_ms)}, bundle ${within(bundle.median, budget.first_frame_ms)}`);
console.log('start-up steps (medians, ms): .wasm downloaded (the bundle: unpacked) + compiled + instantiated, static constructors, main() (catalogues, first estimate), then the first frame (its CPU time in the app)');
for (const r of [page, bundle]) {
  const t = r.steps;
  const unpacked = t.unpack > 0 ? ` (unpacked in ${t.unpack.toFixed(0)})` : '';
  console.log(`  ${r.name.padEnd(25)} instantiated at ${t.instantiate.toFixed(0).padStart(4)}${unpacked}  constructors ${t.constructors.toFixed(0).padStart(4)}` +
    `  main ${t.main.toFixed(0).padStart(4)}  first frame ${t.frame.toFixed(0).padStart(4)} (app CPU ${t.frameCpu.toFixed(0)})`);
}
console.log('main() and the first frame, step by step (medians, ms; ui/main.cpp)');
for (const [step] of STEPS)
  console.log(`  ${step.padEnd(44)} ${[page, bundle].map((r) => r.parts[step].toFixed(0).padStart(6)).join('')}  (page, bundle)`);
console.log('decision panels ready after the first frame (every open panel current; the default page opens "What would make it fit")');
for (const r of [page, bundle])
  console.log(`  ${r.name.padEnd(25)} median ${r.panels.toFixed(0).padStart(5)} ms  p90 ${r.panelsP90.toFixed(0).padStart(5)} ms`);
console.log(`  budget: <= ${budget.panels_ready_ms} ms more (median): page ${within(page.panels, budget.panels_ready_ms)}, ` +
  `bundle ${within(bundle.panels, budget.panels_ready_ms)}`);

console.log('\nframe time (CPU time of one app frame, ms; 120 frames each; headless Chromium, SwiftShader)');
for (const [name, xs] of [['idle', frameStats.idle], ['dragging the batch slider', frameStats.dragging]])
  console.log(`  ${name.padEnd(26)} median ${quantile(xs, 0.5).toFixed(2).padStart(6)} ms  p90 ${quantile(xs, 0.9).toFixed(2).padStart(6)} ms` +
    `  max ${Math.max(...xs).toFixed(2).padStart(6)} ms`);
console.log(`  (${frameStats.estimates} estimates ran during the drag)`);
const dragP90 = quantile(frameStats.dragging, 0.9), dragMax = Math.max(...frameStats.dragging);
console.log(`  budget: dragging p90 <= ${budget.drag_frame_p90_ms} ms, max <= ${budget.drag_frame_max_ms} ms: ` +
  `${within(dragP90, budget.drag_frame_p90_ms)}, ${within(dragMax, budget.drag_frame_max_ms)}`);
console.log(`  after the release, until the panels are ready (${frameStats.settling.length} frames): ` +
  `max ${Math.max(...frameStats.settling).toFixed(2)} ms (the frame that runs fit)`);

console.log('\nthe planner in the page (gpumem::plan as the panel calls it; headless Chromium; 7 plans each)');
for (const [name, { times, search }] of plans)
  console.log(`  ${name.padEnd(46)} median ${quantile(times, 0.5).toFixed(1).padStart(6)} ms  p90 ${quantile(times, 0.9).toFixed(1).padStart(6)} ms` +
    `  (${search.candidates} layouts, ${search.evaluations} evaluations, ${search.fitting} fit)`);
console.log('  aim: a full plan under 200 ms in the page');
console.log('\nfirst use of the tools the page fetches when needed (click on "Configs to run" -> its config written; 5 fresh loads)');
for (const [name, times] of [['page (fetches gpumem_tools)', tools], ['offline bundle (linked in)', toolsBundle]])
  console.log(`  ${name.padEnd(30)} median ${quantile(times, 0.5).toFixed(0).padStart(5)} ms  p90 ${quantile(times, 0.9).toFixed(0).padStart(5)} ms`);
