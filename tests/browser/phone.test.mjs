// The page on a phone, with real touch: Debian's headless Chromium as a 390x844 screen at 3x with
// touch (playwright's hasTouch/isMobile: touch emulation, a coarse pointer), driven through the
// DevTools protocol's Input.dispatchTouchEvent (the browser's own touchstart/move/end events).
// A swipe scrolls the page and keeps going after the finger lifts; a horizontal drag on a slider
// moves its value from where it was, a tap on one leaves it; targets are at least 24 CSS px; the
// fit table's columns hold their text; every help marker "(?)" is a finger's target and a tap opens its
// text; pinch-zoom is the browser's, and once it settles the app draws the canvas at the zoomed
// resolution (sharp text) where taps still land. Screenshots at 390x844@3x and on three desktop screens
// go to tests/browser/out/phone-*.png and desktop-*.png.
//
//   GPUMEM_CLI=... GPUMEM_SITE_DIR=... node --test tests/browser/phone.test.mjs

import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import { frames, launchBrowser, outDir, siteDir, startServer, until, watchForProblems } from './harness.mjs';

const PHONE = { width: 390, height: 844 };
const PHONE_DEVICE = { deviceScaleFactor: 3, hasTouch: true, isMobile: true };
const MIN_TARGET = 24;   // CSS px: WCAG 2.2, 2.5.8 Target Size (Minimum)

let server;
let baseUrl;
let browser;   // { context, page, userDataDir }
let page;
let cdp;
const problems = [];

before(async () => {
  assert.ok(existsSync(join(siteDir, 'index.html')), `no site at ${siteDir}`);
  ({ child: server, url: baseUrl } = await startServer());
  browser = await launchBrowser(PHONE, PHONE_DEVICE);
  page = browser.page;
  watchForProblems(page, problems);
  cdp = await browser.context.newCDPSession(page);
  await mkdir(outDir, { recursive: true });
});

after(async () => {
  await browser?.context.close();
  if (browser) await rm(browser.userDataDir, { recursive: true, force: true });
  server?.kill();
});

const layout = async () => { await frames(page, 2); return page.evaluate(() => window.gpumem.uiLayout()); };
const uiState = () => page.evaluate(() => window.gpumem.uiState());
const scenario = () => page.evaluate(() => window.gpumem.uiScenario());

// One finger through the DevTools protocol: touchStart, touchMoves, touchEnd. The moves carry their
// own times (`dt` ms apart; the finger rests `rest` ms before lifting), so a flick is as fast as a
// finger's even on this slow software-rendered screen, where a frame takes most of a second.
async function touch(type, x, y, timestamp) {
  await cdp.send('Input.dispatchTouchEvent', {
    type, touchPoints: type === 'touchEnd' ? [] : [{ x: Math.round(x), y: Math.round(y) }],
    ...(timestamp ? { timestamp } : {}),
  });
}
async function drag(from, to, { steps = 8, dt = 16, rest = 0, hold = 2 } = {}) {
  await touch('touchStart', from.x, from.y);
  await frames(page, hold);   // the app learns what is under the finger
  const t0 = Date.now() / 1000;
  for (let i = 1; i <= steps; i++)
    await touch('touchMove', from.x + ((to.x - from.x) * i) / steps, from.y + ((to.y - from.y) * i) / steps,
      t0 + (i * dt) / 1000);
  await touch('touchEnd', 0, 0, t0 + (steps * dt + rest) / 1000);
  await frames(page, 1);
}
async function tap(x, y) {
  await touch('touchStart', x, y);
  await frames(page, 2);
  await touch('touchEnd');
  await frames(page, 4);
}
const centre = (r) => ({ x: r.x + r.w / 2, y: r.y + r.h / 2 });
const visible = (r) => r && r.y >= 0 && r.y + r.h <= PHONE.height;

// Swipes up (content moves up) from the middle of the screen until `name` is on screen.
async function swipeTo(name, { max = 30 } = {}) {
  const seen = [];   // where it was before each swipe, for the message when it never shows
  for (let i = 0; i < max; i++) {
    const r = (await layout())[name];
    if (visible(r)) return r;
    seen.push(r ? Math.round(r.y) : 'off');
    const up = !r || r.y >= 0;   // below the screen, or its top on it and its bottom below: bring it up
    const x = PHONE.width * 0.9;   // the right edge: labels and empty space, not a control
    await drag({ x, y: up ? 700 : 200 }, { x, y: up ? 200 : 700 }, { steps: 10, rest: 300 });   // no fling
    await frames(page, 3);
  }
  throw new Error(`${name} never came into view by swiping (its y before each swipe: ${seen.join(' ')})`);
}

test('the phone gets the one-column page, zoomable, with a coarse pointer', async () => {
  await page.goto(baseUrl);
  await page.evaluate(() => window.gpumemReady);
  await frames(page, 5);
  const shown = await page.evaluate(() => ({
    viewport: document.querySelector('meta[name=viewport]').getAttribute('content'),
    touchAction: getComputedStyle(document.getElementById('canvas')).touchAction,
    coarse: matchMedia('(pointer: coarse)').matches,
    canvas: [document.getElementById('canvas').width, document.getElementById('canvas').height],
  }));
  // Pinch-zoom allowed: no user-scalable=no and no maximum-scale; the canvas leaves two fingers to the browser.
  assert.doesNotMatch(shown.viewport, /user-scalable\s*=\s*(no|0)|maximum-scale/i);
  assert.match(shown.viewport, /width=device-width/);
  assert.equal(shown.touchAction, 'pinch-zoom');
  assert.equal(shown.coarse, true, 'touch emulation makes the pointer coarse');
  assert.deepEqual(shown.canvas, [PHONE.width * 3, PHONE.height * 3]);

  const state = await uiState();
  assert.equal(state.coarse_pointer, true);
  assert.equal(state.ui_scale, 4, 'at 3x a finger gets a 4x UI: 13 px font drawn 17.3 CSS px tall');
  const l = await layout();
  assert.ok(l.page_column && !l.controls_column && !l.results_column, `one column: ${Object.keys(l)}`);
  // The first things to set, first; the rest under "More", closed.
  for (const name of ['preset', 'mode_training', 'gpu', 'num_gpus', 'more_header'])
    assert.ok(visible(l[name]), `${name} on the first screen: ${JSON.stringify(l[name])}`);
  assert.ok(l.preset.y < l.mode_training.y && l.mode_training.y < l.gpu.y && l.gpu.y < l.num_gpus.y
    && l.num_gpus.y < l.more_header.y, 'model, mode, GPU, count, then More');
  assert.equal(state.more_open, false);
  assert.equal(l.batch_size, undefined, 'batch size is under More');
  assert.equal(l.gpu_memory_gb, undefined, 'the custom card size is under More');
  await writeFile(join(outDir, 'phone-top.png'), await page.screenshot());
});

test('targets are at least 24 CSS px for a finger', async () => {
  const l = await layout();
  const names = ['source_preset', 'source_hub', 'preset', 'mode_training', 'mode_inference', 'gpu', 'num_gpus',
    'more_header'];
  for (const name of names) {
    assert.ok(l[name], `${name} drawn`);
    assert.ok(l[name].h >= MIN_TARGET && l[name].w >= MIN_TARGET, `${name}: ${JSON.stringify(l[name])}`);
  }
});

// The help markers drawn (help_1, help_2, ...: ui/test_hooks.cpp), by layout name.
const helpMarkers = (l) => Object.keys(l).filter((name) => /^help_\d+$/.test(name));

test('every help marker "(?)" is at least 24 CSS px, and a tap opens its text', async () => {
  // The first screen's, and every one under More (opened with a tap, then closed again).
  let l = await layout();
  const first = helpMarkers(l);
  assert.ok(first.length >= 3, `help markers on the first screen: ${first}`);
  for (const name of first)
    assert.ok(l[name].h >= MIN_TARGET && l[name].w >= MIN_TARGET, `${name}: ${JSON.stringify(l[name])}`);
  const more = l.more_header;
  await tap(more.x + more.w / 2, more.y + more.h / 2);
  assert.equal((await uiState()).more_open, true);
  l = await layout();
  const all = helpMarkers(l);
  assert.ok(all.length > first.length + 10, `more help markers under More: ${all.length}`);
  for (const name of all)
    assert.ok(l[name].h >= MIN_TARGET && l[name].w >= MIN_TARGET, `${name}: ${JSON.stringify(l[name])}`);
  console.log(`# ${all.length} help markers, the smallest ${Math.min(...all.map((n) => l[n].w)).toFixed(1)} x `
    + `${Math.min(...all.map((n) => l[n].h)).toFixed(1)} CSS px`);

  // A tap on one on screen (the GPU's, beside its label) opens its text; a tap elsewhere closes it.
  const shown = all.filter((name) => visible(l[name]) && l[name].y > 100);
  assert.ok(shown.length > 0, 'a help marker on screen');
  const marker = l[shown[0]];
  const unchanged = await scenario();
  await tap(marker.x + marker.w / 2, marker.y + marker.h / 2);
  let state = await uiState();
  assert.ok((state.texts.help_text ?? '').length > 20, `the tap opened the help text: ${JSON.stringify(state.texts)}`);
  await writeFile(join(outDir, 'phone-help.png'), await page.screenshot());
  await tap(PHONE.width * 0.9, 20);
  state = await uiState();
  assert.equal(state.texts.help_text, undefined, 'a tap elsewhere closed it');
  assert.deepEqual(await scenario(), unchanged, 'the taps changed no setting');
  // The custom card size is under More, at its end (a screenshot of the narrow rows there).
  const custom = await swipeTo('gpu_memory_gb');
  assert.ok(custom.h >= MIN_TARGET, `the custom size field is a finger's target: ${JSON.stringify(custom)}`);
  await writeFile(join(outDir, 'phone-more-end.png'), await page.screenshot());
  // Close More again, for the tests after this one.
  // Back up until More's header is well below the page's title (swipeTo stops once it is on the screen).
  for (let i = 0; i < 20 && !((await layout()).more_header?.y > 300); i++) {
    await drag({ x: PHONE.width * 0.9, y: 200 }, { x: PHONE.width * 0.9, y: 700 }, { steps: 10, rest: 300 });
    await frames(page, 3);
  }
  await frames(page, 10);   // the page at rest: a tap on a moving page only stops it
  const header = (await layout()).more_header;
  await tap(header.x + header.w / 2, header.y + header.h / 2);
  assert.equal((await uiState()).more_open, false);
});

test('a swipe scrolls the page, with momentum, and brings the results into view', async () => {
  const before = (await layout()).fit_header;
  assert.ok(!visible(before), `"What would make it fit" starts below the fold: ${JSON.stringify(before)}`);

  // One quick flick: the page follows the finger, then keeps moving after it lifts.
  const x = PHONE.width * 0.9;
  const unchanged = await scenario();
  const start = (await layout()).more_header.y;
  await drag({ x, y: 700 }, { x, y: 400 }, { steps: 6, dt: 16 });   // 300 px in 0.1 s
  const lifted = (await page.evaluate(() => window.gpumem.uiLayout())).more_header.y;
  await frames(page, 20);
  const settled = (await layout()).more_header.y;
  assert.ok(lifted < start - 150, `the content followed the finger: ${start} -> ${lifted}`);
  assert.ok(settled < lifted - 5, `momentum carried it on after the finger lifted: ${lifted} -> ${settled}`);
  assert.deepEqual(await scenario(), unchanged, 'the flick changed no setting');

  const shown = await swipeTo('fit_header');
  assert.ok(visible(shown), JSON.stringify(shown));
  await writeFile(join(outDir, 'phone-results.png'), await page.screenshot());
});

test('sliders: a tap keeps the value, a horizontal drag moves it from where it was, a vertical swipe scrolls', async () => {
  // Back to the top, then open More with a tap.
  const more = await swipeTo('more_header');
  await tap(more.x + more.w / 2, more.y + more.h / 2);
  assert.equal((await uiState()).more_open, true, 'a tap opened More');
  const slider = await swipeTo('batch_size');
  assert.ok(slider.h >= MIN_TARGET, `the slider is a finger's target: ${JSON.stringify(slider)}`);
  const batch0 = (await scenario()).training.batch_size;

  // A tap far from the grab (at 85 % of the track) leaves the value.
  const far = { x: slider.x + slider.w * 0.85, y: slider.y + slider.h / 2 };
  await tap(far.x, far.y);
  assert.equal((await scenario()).training.batch_size, batch0, 'a tap does not jump the slider');

  // A drag from that same far point, 40 CSS px to the right: the value moves by about 40 px worth of
  // the logarithmic track (1..512: 9 doublings over the track), up from where it was; never to the
  // finger's point (about 512^0.85 = 200).
  await drag(far, { x: far.x + 40, y: far.y }, { steps: 8, dt: 30, rest: 300 });
  await frames(page, 4);
  const batch1 = (await scenario()).training.batch_size;
  const doublings = Math.log2(batch1 / batch0);
  const expected = (9 * 40) / (slider.w - 4 - 16 * 4 / 3);   // the track: the frame less padding and grab
  assert.ok(batch1 > batch0, `the drag raised the batch: ${batch0} -> ${batch1}`);
  assert.ok(doublings <= expected * 1.5 + 0.5,
    `${batch0} -> ${batch1}: ${doublings.toFixed(2)} doublings for ${expected.toFixed(2)} expected`);
  assert.ok(batch1 < 100, `no jump to the finger (~200): ${batch1}`);

  // A vertical swipe that starts on the slider scrolls the page and leaves the value.
  const y0 = (await layout()).batch_size.y;
  const on = centre((await layout()).batch_size);
  await drag(on, { x: on.x + 6, y: on.y - 200 }, { steps: 8, rest: 300 });
  await frames(page, 4);
  const y1 = (await layout()).batch_size?.y ?? -Infinity;
  assert.ok(y1 < y0 - 150, `the page scrolled: ${y0} -> ${y1}`);
  assert.equal((await scenario()).training.batch_size, batch1, 'the swipe left the slider');
});

test('the fit table keeps its columns whole on a phone (it scrolls sideways)', async () => {
  // A scenario that does not fit (a link): the fit panel lists changes; the link's batch is under
  // More, so More opens.
  const doc = { training: { batch_size: 16, seq_len: 8192 } };
  const s = Buffer.from(JSON.stringify(doc)).toString('base64url');
  await page.goto(`${baseUrl}?model=meta-llama/Llama-3.1-8B&s=${s}`);
  await page.evaluate(() => window.gpumemReady);
  await frames(page, 8);
  assert.equal((await scenario()).training.batch_size, 16);
  assert.equal((await uiState()).more_open, true, 'a link that sets a field under More opens it');

  let state = await uiState();
  for (let i = 0; i < 100 && !(state.decisions.fit.suggestions?.length > 0); i++) {
    await frames(page, 5);
    state = await uiState();
  }
  assert.ok(state.decisions.fit.suggestions?.length > 0, 'the fit panel has changes to list');
  const apply = await swipeTo('fit_apply_1');
  assert.ok(apply.h >= MIN_TARGET && apply.w >= MIN_TARGET, `Apply is a finger's target: ${JSON.stringify(apply)}`);
  state = await uiState();
  const table = state.tables.fit_table;
  assert.ok(table, `the fit table scrolls sideways (a child window): ${Object.keys(state.tables)}`);
  table.forEach((column, i) => assert.ok(column.content <= column.width + 1,
    `column ${i} holds its text: ${JSON.stringify(column)}`));
  await writeFile(join(outDir, 'phone-fit.png'), await page.screenshot());

  // A horizontal swipe on the table scrolls it sideways: Apply moves left with the content.
  const before = (await layout()).fit_apply_1;
  await drag({ x: 300, y: before.y + before.h / 2 }, { x: 100, y: before.y + before.h / 2 },
    { steps: 8, rest: 300 });
  await frames(page, 4);
  const after = (await layout()).fit_apply_1;
  assert.ok(after.x < before.x - 50, `the table scrolled sideways: ${before.x} -> ${after.x}`);
  assert.equal((await scenario()).training.batch_size, 16, 'the swipe applied nothing');
});

test('a swipe that starts on a list already at its end scrolls the page, as a browser chains it', async () => {
  // "Which GPUs fit": a table that scrolls its own rows (more cards than its 14 lines).
  const header = await swipeTo('gpus_header');
  if (!(await layout()).gpu_table) await tap(header.x + header.w / 2, header.y + header.h / 2);
  const box = await swipeTo('gpu_table');
  const x = box.x + box.w / 2;
  const y = () => layout().then((l) => l.gpu_table.y);
  const swipe = async (from, by) => {
    await drag({ x, y: from }, { x, y: from + by }, { steps: 10, rest: 300 });
    await frames(page, 3);
  };
  // A finger that moves up on it scrolls its rows, not the page (the table can still move that way)...
  const y0 = await y();
  await swipe(y0 + box.h * 0.8, -120);
  const y1 = await y();
  assert.ok(Math.abs(y1 - y0) <= 2, `the table scrolled its rows, the page stayed: ${y0} -> ${y1}`);
  // ...down, it takes its rows back to their top (still the table's), and once they are there, the page moves.
  await swipe(y1 + box.h * 0.2, 150);
  const y2 = await y();
  assert.ok(Math.abs(y2 - y1) <= 2, `the table took the swipe back to its top: ${y1} -> ${y2}`);
  await swipe(y2 + box.h * 0.2, 150);
  const y3 = await y();
  assert.ok(y3 > y2 + 100, `with its rows at their top, the page scrolled with the finger: ${y2} -> ${y3}`);
});

test('after a pinch-zoom to 3x the canvas is drawn at the zoomed resolution and still takes taps', async () => {
  await page.goto(baseUrl);
  await page.evaluate(() => window.gpumemReady);
  await frames(page, 5);
  // Two fingers spread from 60 to 180 px apart (3x): the browser's pinch-zoom (the app's gesture is
  // cancelled: nothing under them is clicked or scrolled).
  const before = await scenario();
  const unzoomed = await uiState();
  const more = (await layout()).more_header;   // zoom in around "More": it stays in view
  const c = { x: 195, y: Math.round(more.y + more.h / 2) };
  const fingers = (gap) => [{ x: c.x - gap / 2, y: c.y, id: 1 }, { x: c.x + gap / 2, y: c.y, id: 2 }];
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchStart', touchPoints: fingers(60) });
  await frames(page, 1);
  for (let i = 1; i <= 12; i++) {
    await cdp.send('Input.dispatchTouchEvent', { type: 'touchMove', touchPoints: fingers(60 + 10 * i) });
    await frames(page, 1);
  }
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchEnd', touchPoints: [] });
  await frames(page, 6);
  assert.deepEqual(await scenario(), before, 'the pinch changed no setting');
  const zoomOf = () => page.evaluate(() => ({
    scale: window.visualViewport.scale, left: window.visualViewport.offsetLeft, top: window.visualViewport.offsetTop,
    canvas: [document.getElementById('canvas').width, document.getElementById('canvas').height],
    css: [document.getElementById('canvas').clientWidth, document.getElementById('canvas').clientHeight],
  }));
  let zoom = await zoomOf();
  assert.ok(zoom.scale > 2.5, `zoomed in about 3x: ${JSON.stringify(zoom)}`);
  // Once the zoom settles the backing store grows: UI scale 4 -> the whole number nearest 4 x 3 within the
  // caps (ui/main.cpp, ZoomedUiScale: 16 M pixels, 8192 on a side, UI scale 6): 6, 1.5 x the pixels a side.
  let state = await until(page, 'the zoomed canvas', (s) => s.ui_scale > unzoomed.ui_scale);
  await frames(page, 3);
  zoom = await zoomOf();
  state = await uiState();
  assert.equal(state.base_scale, 4);
  assert.equal(state.ui_scale, 6, `the UI drawn at 6 device px per UI px: ${JSON.stringify(zoom)}`);
  assert.deepEqual(zoom.canvas, [PHONE.width * 4.5, PHONE.height * 4.5], 'the backing store grew 1.5 x a side');
  assert.deepEqual(zoom.css, [PHONE.width, PHONE.height], 'the canvas keeps its CSS size');
  assert.deepEqual(state.canvas, zoom.canvas);
  assert.ok(zoom.canvas[0] * zoom.canvas[1] <= 4096 * 4096, 'within 16 M pixels');
  assert.ok(state.font_atlas[0] <= 4096 && state.font_atlas[1] <= 4096, `font atlas ${state.font_atlas}`);
  // The layout in CSS pixels is the one before the zoom (within a pixel: ImGui rounds some sizes).
  const l0 = await layout();
  assert.ok(Math.abs(l0.more_header.y - more.y) <= 2 && Math.abs(l0.more_header.h - more.h) <= 2,
    `the page did not move under the zoom: ${JSON.stringify([more, l0.more_header])}`);
  // A tap, in the zoomed view's coordinates, lands on the control under it: one of these, at the
  // middle of the part of it the zoomed view shows.
  const l = await layout();
  const view = { x0: zoom.left, y0: zoom.top, x1: zoom.left + PHONE.width / zoom.scale,
    y1: zoom.top + PHONE.height / zoom.scale };
  const shownPart = (r) => {
    const x0 = Math.max(r.x, view.x0) + 1, x1 = Math.min(r.x + r.w, view.x1) - 1;
    const y0 = Math.max(r.y, view.y0) + 1, y1 = Math.min(r.y + r.h, view.y1) - 1;
    return x1 > x0 && y1 > y0 ? { x: (x0 + x1) / 2, y: (y0 + y1) / 2 } : null;
  };
  const effects = {
    more_header: async (s0) => assert.equal((await uiState()).more_open, !s0.more_open, 'the tap toggled More'),
    mode_inference: async () => assert.equal((await scenario()).mode, 'inference', 'the tap chose Inference'),
    source_hub: async () => assert.equal((await uiState()).source, 'hub', 'the tap chose Hub'),
    source_config: async () => assert.equal((await uiState()).source, 'config', 'the tap chose config.json'),
    source_manual: async () => assert.equal((await uiState()).source, 'manual', 'the tap chose By hand'),
  };
  const target = Object.keys(effects).find((name) => l[name] && shownPart(l[name]));
  assert.ok(target, `a control in the zoomed view: ${JSON.stringify({ view, l })}`);
  const part = shownPart(l[target]);
  const s0 = await uiState();
  // The DevTools protocol takes a touch's place in CSS pixels from the zoomed view's corner (unscaled:
  // the touch's clientX is then offsetLeft + x, as Chromium reports a finger there).
  await tap(part.x - view.x0, part.y - view.y0);
  await effects[target](s0);
  console.log(`# zoomed ${zoom.scale.toFixed(2)}x, canvas ${zoom.canvas.join('x')}, tapped ${target}`);
  await writeFile(join(outDir, 'phone-zoomed.png'), await page.screenshot());
  // Back to 1x (the browser's own scale): the backing store follows.
  await cdp.send('Emulation.setPageScaleFactor', { pageScaleFactor: 1 });
  await until(page, 'the canvas back at 1x', (s) => s.ui_scale === 4);
  await frames(page, 3);
  assert.deepEqual((await zoomOf()).canvas, [PHONE.width * 3, PHONE.height * 3]);
});

test('desktop screens keep two columns and the mouse', async () => {
  for (const [name, viewport, dpr] of [['1440x900', { width: 1440, height: 900 }, 1],
    ['1280x800@2x', { width: 1280, height: 800 }, 2], ['1920x1080', { width: 1920, height: 1080 }, 1]]) {
    const desk = await launchBrowser(viewport, { deviceScaleFactor: dpr });
    try {
      watchForProblems(desk.page, problems);
      await desk.page.goto(baseUrl);
      await desk.page.evaluate(() => window.gpumemReady);
      await frames(desk.page, 5);
      const l = await desk.page.evaluate(() => window.gpumem.uiLayout());
      const state = await desk.page.evaluate(() => window.gpumem.uiState());
      assert.ok(l.controls_column && l.results_column, `${name}: two columns`);
      assert.equal(state.coarse_pointer, false, `${name}: a mouse`);
      assert.equal(state.ui_scale, dpr, `${name}: the UI at the device pixel ratio`);
      await writeFile(join(outDir, `desktop-${name}.png`), await desk.page.screenshot());
      // More opened with the mouse, and the controls column scrolled to its end: nothing overlaps there.
      await desk.page.mouse.click(l.more_header.x + 40, l.more_header.y + l.more_header.h / 2);
      await frames(desk.page, 3);
      assert.equal((await desk.page.evaluate(() => window.gpumem.uiState())).more_open, true, `${name}: More opened`);
      await writeFile(join(outDir, `desktop-${name}-more.png`), await desk.page.screenshot());
      await desk.page.mouse.move(l.controls_column.x + l.controls_column.w / 2, viewport.height / 2);
      for (let i = 0; i < 12; i++) await desk.page.mouse.wheel(0, 240);
      await frames(desk.page, 4);
      await writeFile(join(outDir, `desktop-${name}-more-end.png`), await desk.page.screenshot());
    } finally {
      await desk.context.close();
      await rm(desk.userDataDir, { recursive: true, force: true });
    }
  }
});

test('no console errors or page errors', () => {
  assert.deepEqual(problems, []);
});
