// gpumem page glue: download the app's WebAssembly with a progress bar, start it on the canvas,
// and expose the estimator to scripts and tests. No dependencies; relative URLs only, so the
// site works from any folder (GitHub Pages serves it under /<repo>/).
//
//   window.gpumem        { estimate(scenario), params(config), presets(), version(),
//                          uiLayout(), uiTotal(), uiScenario(), wasmMemoryBytes() }: objects
//                          (or JSON text) in, objects out
//   window.gpumemReady   a Promise resolved after the first frame is drawn, with
//                          { firstFrameMs }: milliseconds from navigation start
//   window.gpumemOffline true in the offline bundle (web/bundle.mjs), which carries the .wasm
//                          inside it (<script id="gpumem-wasm">, base64) and may not use the
//                          network at all: a feature that would fetch (the Hub) says "offline"
'use strict';

(function () {
  const canvas = document.getElementById('canvas');
  const loading = document.getElementById('loading');
  const loadingBar = document.getElementById('loading-bar');
  const loadingText = document.getElementById('loading-text');

  let resolveReady;
  let rejectReady;
  window.gpumemReady = new Promise((resolve, reject) => {
    resolveReady = resolve;
    rejectReady = reject;
  });

  const MiB = 1024 * 1024;

  function showProgress(received, total) {
    // Servers that compress report the compressed length: then only the count is meaningful.
    if (total > 0 && received <= total) {
      loadingBar.value = received / total;
      loadingText.textContent =
        `Loading ${(received / MiB).toFixed(1)} of ${(total / MiB).toFixed(1)} MiB`;
    } else {
      loadingBar.removeAttribute('value');
      loadingText.textContent = `Loading ${(received / MiB).toFixed(1)} MiB`;
    }
  }

  function fail(error) {
    loading.classList.remove('hidden');
    loading.classList.add('failed');
    loadingText.textContent = `gpumem could not start: ${error && error.message ? error.message : error}`;
    rejectReady(error instanceof Error ? error : new Error(String(error)));
  }

  // The whole response as bytes, reporting progress as chunks arrive.
  async function fetchWithProgress(url, onProgress) {
    const response = await fetch(url);
    if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
    const total = Number(response.headers.get('Content-Length')) || 0;
    if (!response.body) {
      const bytes = new Uint8Array(await response.arrayBuffer());
      onProgress(bytes.length, total);
      return bytes;
    }
    const reader = response.body.getReader();
    const chunks = [];
    let received = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      received += value.length;
      onProgress(received, total);
    }
    const bytes = new Uint8Array(received);
    let offset = 0;
    for (const chunk of chunks) {
      bytes.set(chunk, offset);
      offset += chunk.length;
    }
    return bytes;
  }

  // The module's functions take and return JSON text (wasm/README.md); these take objects too.
  function wrap(module) {
    const text = (value) => (typeof value === 'string' ? value : JSON.stringify(value === undefined ? null : value));
    return {
      estimate: (scenario) => JSON.parse(module.estimate(text(scenario))),
      params: (config) => JSON.parse(module.params(text(config))),
      presets: () => JSON.parse(module.presets()),
      version: () => module.version(),
      uiLayout: () => JSON.parse(module.ui_layout()),
      uiTotal: () => JSON.parse(module.ui_total()),
      uiScenario: () => JSON.parse(module.ui_scenario()),
      wasmMemoryBytes: () => module.HEAP8.buffer.byteLength,
    };
  }

  // The offline bundle's .wasm: base64 text in a data block that is never executed.
  function takeEmbeddedWasm() {
    const block = document.getElementById('gpumem-wasm');
    if (!block) return null;
    const text = atob(block.textContent.trim());
    block.remove();   // the base64 copy is no longer needed
    const bytes = new Uint8Array(text.length);
    for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
    return bytes;
  }

  async function start() {
    showProgress(0, 0);
    const embedded = takeEmbeddedWasm();
    window.gpumemOffline = embedded !== null;
    const wasmBinary = embedded ?? await fetchWithProgress('gpumem_app.wasm', showProgress);
    loadingText.textContent = 'Starting\u2026';

    // MODULARIZE: this object becomes the module itself (its functions are added to it).
    const module = {
      canvas,
      wasmBinary,
      print: (text) => console.log(text),
      printErr: (text) => console.error(text),
      onAbort: (what) => fail(new Error(`aborted: ${what}`)),
      onFirstFrame() {
        window.gpumem = wrap(module);
        loading.classList.add('hidden');
        resolveReady({ firstFrameMs: performance.now() });
      },
    };
    await createGpumemApp(module);
  }

  if (typeof createGpumemApp !== 'function' || typeof WebAssembly !== 'object') {
    fail(new Error('this browser cannot run WebAssembly, or gpumem_app.js did not load'));
  } else {
    start().catch(fail);
  }
})();
