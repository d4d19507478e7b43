// gpumem page glue: download the app's WebAssembly with a progress bar, start it on the canvas,
// and expose the estimator to scripts and tests. No dependencies; relative URLs only, so the
// site works from any folder (GitHub Pages serves it under /<repo>/).
//
//   window.gpumem        { estimate(scenario), params(config), presets(), version(),
//                          uiLayout(), uiTotal(), uiScenario(), wasmMemoryBytes() }: objects
//                          (or JSON text) in, objects out
//   window.gpumemReady   a Promise resolved after the first frame is drawn, with
//                          { firstFrameMs }: milliseconds from navigation start
//   window.gpumemTimings { instantiatedMs, runtimeMs, mainMs, firstFrameMs, steps }: milliseconds from
//                          navigation start to the .wasm downloaded, compiled and instantiated; its
//                          static constructors run; main() done (the catalogues, the first
//                          estimate); the first frame drawn; steps: { window, imgui, app, frame_setup,
//                          frame_app }, when each of main()'s and the first frame's steps ended
//                          (ui/main.cpp; tests/bench/page.mjs prints them)
//   window.gpumemOffline true in the offline bundle (web/bundle.mjs), which carries the .wasm
//                          inside it (<script id="gpumem-wasm">, gzip, base64) and may not use the
//                          network at all: a feature that would fetch (the Hub) says "offline"
//
// The page's services for the app (Module.page, called from ui/main.cpp): the Hub fetch
// (web/hub.js), the URL and saved settings, the clipboard, downloads and opening files.
//
//   URL      ?model=ID[&rev=REVISION][&hub=BASE]&s=SCENARIO   (SCENARIO: base64url of the scenario
//            JSON without its model when the model is a preset or a Hub id). /?model=Qwen/Qwen3-8B
//            alone opens that model: a bundled preset at once, any other id from the Hub. A link's
//            hub= is used for that visit only (the app shows it in a banner) and never saved; a
//            link whose s= cannot be read opens with a message saying why. &cal=HASH&cal_name=NAME
//            names the calibration file the numbers were made with (never its content).
//   saved    localStorage, under keys prefixed with this site's folder (two copies of the page on
//            one origin keep apart): "state", the last URL query without hub=, restored when a
//            visit has none; "hub_token", the Hub token, only while "remember" is ticked;
//            "calibration:HASH", each calibration file loaded, applied when a link names its hash
//            (the app then shows it as set by the link) and deleted by its Remove button.
//            SECURITY.md lists every key.
//   token    the app hands it over with each Hub fetch; hub.js attaches it only for
//            https://huggingface.co and the https origins the user confirmed this visit
//            (trustHub, kept in this closure and never saved). Never in the URL or a log.
//   limits   files and dropped text over 4 MiB, and an s= over 1 MiB, are refused with a message
//            before they reach the WebAssembly heap.
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
  const MAX_TEXT_BYTES = 4 * MiB;        // a file or dropped text (the largest config.json is ~100 kB)
  const MAX_LINK_SCENARIO = 1 * MiB;     // s= in a link, as base64url characters
  // Keys per site: GitHub Pages serves every project site of a user from one origin.
  const SITE = window.location.pathname.replace(/[^/]*$/, '');
  const STATE_KEY = `gpumem:${SITE}:state`;
  const TOKEN_KEY = `gpumem:${SITE}:hub_token`;
  // Calibration files the user loaded, by hash: a link names one (cal=HASH) and this browser's copy
  // is applied when it has it.
  const calibrationKey = (hash) => `gpumem:${SITE}:calibration:${hash}`;
  // Origins the user confirmed for the token this visit (hub.js trusts the Hub's own anyway).
  const trustedOrigins = new Set();

  // "12.3 MiB" for messages.
  const mib = (bytes) => `${(bytes / MiB).toFixed(1)} MiB`;

  // localStorage, or null where the browser refuses it (some file:// and private modes).
  function storage() {
    try {
      return window.localStorage;
    } catch {
      return null;
    }
  }

  // "?model=Qwen/Qwen3-8B&s=..." ('/' left readable in ids).
  const queryText = (params) => `?${params.toString().replace(/%2F/g, '/')}`;

  // Before the keys were per site they were "gpumem.state" and "gpumem.hub_token": move them over
  // once (the state without hub=, which is no longer saved) and delete the old ones.
  function migrateStorage() {
    const saved = storage();
    if (!saved) return;
    const token = saved.getItem('gpumem.hub_token');
    if (token && !saved.getItem(TOKEN_KEY)) saved.setItem(TOKEN_KEY, token);
    const state = saved.getItem('gpumem.state');
    if (state && !saved.getItem(STATE_KEY)) {
      const params = new URLSearchParams(state);
      params.delete('hub');
      saved.setItem(STATE_KEY, queryText(params));
    }
    saved.removeItem('gpumem.hub_token');
    saved.removeItem('gpumem.state');
  }

  // base64url of UTF-8 text, and back (null when it is not such text).
  function encodeText(text) {
    const bytes = new TextEncoder().encode(text);
    let binary = '';
    for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
    return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  }
  function decodeText(text) {
    try {
      const binary = atob(text.replace(/-/g, '+').replace(/_/g, '/'));
      const bytes = new Uint8Array(binary.length);
      for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
      return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      return null;
    }
  }

  // What the link (or, without one, the saved settings) asks the app to open. The scenario goes
  // to the app as text: the core's reader limits its depth and says what is wrong with it.
  function openRequest() {
    const saved = storage();
    const fromLink = /[?&](model|s|hub|cal)=/.test(window.location.search);
    const query = fromLink ? window.location.search : (saved && saved.getItem(STATE_KEY)) || '';
    const params = new URLSearchParams(query);
    const request = {};
    if (params.get('model')) request.model = params.get('model');
    if (params.get('rev')) request.revision = params.get('rev');
    // Only a link may point the page at another Hub, for this visit; saved settings never do.
    if (fromLink && params.get('hub')) request.hub = params.get('hub');
    const encoded = params.get('s');
    if (encoded && encoded.length > MAX_LINK_SCENARIO) {
      request.link_problem = `they are too large (${mib(encoded.length)}; limit ${mib(MAX_LINK_SCENARIO)})`;
    } else if (encoded) {
      const text = decodeText(encoded);
      if (text === null) request.link_problem = 'they are not base64url-encoded UTF-8 text';
      else request.scenario_text = text;
    }
    const calibration = params.get('cal');
    if (calibration) {
      request.calibration = { hash: calibration, name: params.get('cal_name') || '' };
      const text = saved && saved.getItem(calibrationKey(calibration));
      if (text) request.calibration_text = text;
    }
    const token = saved && saved.getItem(TOKEN_KEY);
    if (token) {
      request.token = token;
      request.remember_token = true;
    }
    return request;
  }

  // The clipboard, with the old way where the new one is refused (file://, no permission).
  function copyText(text) {
    const fallback = () => {
      const area = document.createElement('textarea');
      area.value = text;
      document.body.appendChild(area);
      area.select();
      document.execCommand('copy');
      area.remove();
    };
    if (navigator.clipboard && navigator.clipboard.writeText) navigator.clipboard.writeText(text).catch(fallback);
    else fallback();
  }

  // "Copy link": the address bar holds the page's settings (saveState), but few know it.
  function copyLinkButton() {
    const button = document.getElementById('copy-link');
    if (!button) return;
    let timer = 0;
    button.addEventListener('click', () => {
      copyText(window.location.href);
      button.textContent = 'Link copied';
      clearTimeout(timer);
      timer = setTimeout(() => { button.textContent = 'Copy link'; }, 2000);
    });
  }

  // The keyboard, for the canvas (which the browser sees as one element):
  // - navigation keys aimed at the canvas are queued and the app takes one event a frame (ui/main.cpp,
  //   FeedQueuedKey), so a press is never lost in a slow frame nor counted twice; the browser's own
  //   key repeat is dropped for them (Dear ImGui repeats a held key itself);
  // - Tab moves between the app's controls (ui/access.h); past the last one, focus goes to the page's
  //   next element (the links), and Tab or Shift+Tab into the canvas lands on its first or last control;
  // - keys aimed at anything else (the links, the typed-value box) never reach the app;
  // - openNumberEditor puts an <input> over a numeric control: the phone's number keyboard, Enter or
  //   leaving it commits (the app refuses text out of range with a message), Escape cancels.
  const NAV_KEYS = new Set([8, 9, 13, 27, 32, 33, 34, 35, 36, 37, 38, 39, 40, 46]);
  const MAX_QUEUED_KEYS = 256;
  const keyboard = {
    queue: [],
    editor: null,        // { input, request, done }
    lastPointer: 'mouse',
    buttonDown: false,   // a pointer is pressed (the box must not take its release)
    tabbedAt: -Infinity, // when Tab last moved focus between the page's elements, and which way
    tabBackward: false,
    next() {
      return this.queue.length > 0 ? this.queue.shift() : -1;
    },
    push(code) {
      if (this.queue.length < MAX_QUEUED_KEYS) this.queue.push(code);
    },
    // The page's focusable elements after (or before) the canvas, in document order.
    leaveCanvas(backward) {
      const all = Array.from(document.querySelectorAll('a[href], button, input, [tabindex]'))
        .filter((e) => e.tabIndex >= 0 && !e.hidden && e.getClientRects().length > 0);
      const at = all.indexOf(canvas);
      const target = backward ? all.slice(0, at).pop() : all.slice(at + 1)[0];
      if (target) target.focus();
      else canvas.blur();
    },
    openNumberEditor(app, request) {
      if (request.touch_only && this.lastPointer !== 'touch') return false;
      this.closeEditor(false);
      const input = document.createElement('input');
      input.type = 'text';
      input.id = 'number-editor';
      input.inputMode = request.integer ? 'numeric' : 'decimal';
      input.enterKeyHint = 'done';
      input.autocomplete = 'off';
      input.value = request.value;
      input.setAttribute('aria-label', `${request.name}, ${request.lo} to ${request.hi}`);
      Object.assign(input.style, {
        left: `${request.x}px`, top: `${request.y}px`, width: `${Math.max(request.w, 80)}px`, height: `${request.h}px`,
      });
      // Opened by a press (Ctrl+click, double-click): the release still belongs to the canvas, or the app
      // would think the button held. The box takes the mouse once it is let go.
      if (this.buttonDown) {
        input.style.pointerEvents = 'none';
        window.addEventListener('pointerup', () => setTimeout(() => { input.style.pointerEvents = ''; }, 0),
          { once: true, capture: true });
      }
      const editor = { input, request, app, done: false };
      input.addEventListener('blur', () => this.commitEditor(editor, true));
      this.editor = editor;
      document.body.appendChild(input);
      input.focus();
      input.select();
      return true;
    },
    // Enter (or leaving the box): the app takes the value or says why not; a refusal keeps the box
    // open after Enter, with the reason as its description.
    commitEditor(editor, leaving) {
      if (editor.done) return;
      const why = editor.app.ui_number_commit(editor.request.id, editor.input.value);
      if (why && !leaving) {
        editor.input.setAttribute('aria-invalid', 'true');
        editor.input.title = why;
        document.getElementById('focus-mirror').textContent = why;
        return;
      }
      this.closeEditor(!leaving);   // leaving: focus is going elsewhere
    },
    closeEditor(refocus) {
      const editor = this.editor;
      if (!editor) return;
      editor.done = true;
      this.editor = null;
      editor.input.remove();
      if (refocus) canvas.focus();
    },
    install() {
      // Before the app's GLFW listeners (window, capture), which it adds when it starts.
      const onKey = (event) => {
        const down = event.type === 'keydown';
        const nav = NAV_KEYS.has(event.keyCode);
        const code = event.keyCode | (down ? 1 << 16 : 0) | (event.shiftKey ? 1 << 17 : 0)
          | (event.ctrlKey || event.metaKey ? 1 << 18 : 0) | (event.altKey ? 1 << 19 : 0);
        if (!down) {
          // A release goes to the app wherever it lands: the key may have been pressed on the canvas.
          if (nav) {
            event.stopImmediatePropagation();
            this.push(code);
          }
          return;
        }
        if (this.editor && event.target === this.editor.input) {
          event.stopImmediatePropagation();
          if (event.key === 'Enter') this.commitEditor(this.editor, false);
          if (event.key === 'Escape') {
            this.editor.app.ui_number_cancel();
            this.closeEditor(true);
          }
          return;
        }
        if (event.target !== canvas && event.target !== document.body) {
          event.stopImmediatePropagation();   // the links' and buttons' keys are theirs
          if (event.key === 'Tab') {
            this.tabbedAt = performance.now();
            this.tabBackward = event.shiftKey;
          }
          return;
        }
        if (!nav) return;
        event.stopImmediatePropagation();
        if (event.keyCode !== 32 && event.keyCode !== 13) event.preventDefault();  // keeps Space's and Enter's keypress
        if (!event.repeat) this.push(code);
      };
      window.addEventListener('keydown', onKey, true);
      window.addEventListener('keyup', onKey, true);
      window.addEventListener('keypress', (event) => {
        if (event.target !== canvas && event.target !== document.body) event.stopImmediatePropagation();
      }, true);
      // Tab into the canvas from the page: its first control (Shift+Tab: its last).
      canvas.addEventListener('focus', () => {
        if (performance.now() - this.tabbedAt < 1000) this.push(9 | (1 << 20) | (this.tabBackward ? 1 << 17 : 0));
        this.tabbedAt = -Infinity;
      });
      window.addEventListener('pointerdown', (event) => {
        this.lastPointer = event.pointerType;
        this.buttonDown = true;
      }, true);
      window.addEventListener('pointerup', () => { this.buttonDown = false; }, true);
    },
  };

  // The services ui/main.cpp calls (Module.page). `app` is the started module.
  function pageServices(app) {
    let fileInput = null;
    return {
      hubFetch(requestText, token) {
        const request = JSON.parse(requestText);
        window.gpumemHub.fetchModel({
          base: request.base, id: request.id, revision: request.revision, token, trustedOrigins,
          offline: window.gpumemOffline === true,
        }).then((answer) => {
          app.ui_hub_response(JSON.stringify({ ...answer, serial: request.serial }));
        });
      },
      // The user confirmed, in the page, that the token may go to this Hub's origin (https only).
      trustHub(base) {
        try {
          const url = new URL(window.gpumemHub.normalizeBase(base));
          if (url.protocol === 'https:') trustedOrigins.add(url.origin);
        } catch {
          // not a Hub address: nothing to trust
        }
      },
      setToken(token, remember) {
        const saved = storage();
        if (!saved) return;
        if (remember && token) saved.setItem(TOKEN_KEY, token);
        else saved.removeItem(TOKEN_KEY);
      },
      saveState(shareText) {
        const share = JSON.parse(shareText);
        const params = new URLSearchParams();
        if (share.model) params.set('model', share.model);
        if (share.revision) params.set('rev', share.revision);
        if (share.hub) params.set('hub', share.hub);
        if (share.scenario) params.set('s', encodeText(JSON.stringify(share.scenario)));
        if (share.calibration) {
          params.set('cal', share.calibration.hash);
          if (share.calibration.name) params.set('cal_name', share.calibration.name);
        }
        const query = queryText(params);
        try {
          window.history.replaceState(null, '', query + window.location.hash);
        } catch {
          // file:// in some browsers: the link cannot change, the saved settings still do.
        }
        // The saved copy leaves hub= out: a later plain visit reads from the Hub again.
        params.delete('hub');
        const saved = storage();
        if (saved) saved.setItem(STATE_KEY, queryText(params));
      },
      // The result in words, in the aria-live region (index.html #summary): screen readers cannot
      // read the canvas.
      setSummary(text) {
        const summary = document.getElementById('summary');
        if (summary && summary.textContent !== text) summary.textContent = text;
      },
      // Keyboard and screen reader (the keyboard object below): the app takes one queued key a frame, and
      // says where focus is and what the results' details are.
      nextKey: () => keyboard.next(),
      leaveCanvas: (backward) => keyboard.leaveCanvas(backward),
      setFocusText(text) {
        const mirror = document.getElementById('focus-mirror');
        if (mirror && mirror.textContent !== text) mirror.textContent = text;
      },
      setDetails(text) {
        const details = document.getElementById('details');
        if (details && details.textContent !== text) details.textContent = text;
      },
      openNumberEditor: (requestText) => keyboard.openNumberEditor(app, JSON.parse(requestText)),
      // Remove (the calibration panel): the browser's copy goes too, so a link naming it says it is missing.
      forgetCalibration(hash) {
        const saved = storage();
        if (saved) saved.removeItem(calibrationKey(hash));
      },
      rememberCalibration(hash, text) {
        const saved = storage();
        try {
          if (saved) saved.setItem(calibrationKey(hash), text);
        } catch {
          // storage full: the link still names it, and the file can be loaded again
        }
      },
      copyText,
      download(name, text) {
        const url = URL.createObjectURL(new Blob([text], { type: 'application/json' }));
        const link = document.createElement('a');
        link.href = url;
        link.download = name;
        document.body.appendChild(link);
        link.click();
        link.remove();
        setTimeout(() => URL.revokeObjectURL(url), 1000);
      },
      openFile() {
        if (!fileInput) {
          fileInput = document.createElement('input');
          fileInput.type = 'file';
          // The tools' configs come as YAML, JSON or a shell script; several at once (an axolotl
          // YAML and the DeepSpeed JSON it names).
          fileInput.accept = '.json,.yaml,.yml,.sh,.txt,application/json';
          fileInput.multiple = true;
          fileInput.hidden = true;
          fileInput.addEventListener('change', () => {
            if (fileInput.files && fileInput.files.length > 0) loadFiles(app, fileInput.files);
            fileInput.value = '';
          });
          document.body.appendChild(fileInput);
        }
        fileInput.click();
      },
    };
  }

  // Files opened or dropped together: read as one group (ui/share.cpp, LoadFiles: the tools'
  // configs among them, and the files one names; one other file as a scenario, config.json, ...).
  // At most MAX_FILES files and MAX_TEXT_BYTES in all.
  const MAX_FILES = 16;
  function loadFiles(app, fileList) {
    const files = Array.from(fileList);
    if (files.length > MAX_FILES) {
      app.ui_import_problem(`${files.length} files`, `too many at once (limit ${MAX_FILES})`);
      return;
    }
    const total = files.reduce((sum, file) => sum + file.size, 0);
    if (total > MAX_TEXT_BYTES) {
      const name = files.length === 1 ? files[0].name : `${files.length} files`;
      app.ui_import_problem(name, `too large (${mib(total)}; limit ${mib(MAX_TEXT_BYTES)})`);
      return;
    }
    Promise.all(files.map((file) => file.text())).then((texts) => {
      app.ui_load_files(JSON.stringify(files.map((file, i) => ({ name: file.name, text: texts[i] }))));
    }, (error) => app.ui_import_problem(files[0].name, `could not be read (${error && error.message})`));
  }

  // Text dropped or pasted onto the page; its UTF-8 size is counted only when it might fit.
  function loadText(app, name, text) {
    const bytes = text.length > MAX_TEXT_BYTES ? text.length : new TextEncoder().encode(text).length;
    if (bytes > MAX_TEXT_BYTES) app.ui_import_problem(name, `too large (${mib(bytes)}; limit ${mib(MAX_TEXT_BYTES)})`);
    else app.ui_load_files(JSON.stringify([{ name, text }]));
  }

  // Files dropped anywhere on the page, several at once: the tools' configs, a scenario, a config.json,
  // a calibration, a data_types.json or a gpu_types.json (ui/share.cpp, LoadFiles, knows them by
  // their content, name and shape). Dropped text (a command selected in a terminal) likewise.
  function acceptDrops(app) {
    document.addEventListener('dragover', (event) => event.preventDefault());
    document.addEventListener('drop', (event) => {
      event.preventDefault();
      const files = event.dataTransfer && event.dataTransfer.files;
      if (files && files.length > 0) loadFiles(app, files);
      else if (event.dataTransfer) loadText(app, 'dropped text', event.dataTransfer.getData('text/plain'));
    });
  }

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

  // Touch (ui/main.cpp, [SECTION] Touch, decides what a finger does): one finger's touches on the
  // canvas go to the app in CSS pixels, and nowhere else (emscripten's GLFW would turn a touch into a
  // click at the last mouse position). A second finger is the browser's: the canvas allows pinch-zoom
  // (page.css, touch-action), and the app's gesture is cancelled. A tap's compatibility mouse events
  // are suppressed (preventDefault on touchend), as is the long-press menu.
  function forwardTouches(app) {
    const START = 0, MOVE = 1, END = 2, CANCEL = 3;
    let finger = null;   // the identifier of the finger the app follows
    let lastTouch = -Infinity;
    // When: the event's own time (the input's, on performance.now()'s clock), not the handler's, so a
    // flick's speed is the finger's even when frames are slow and events wait for the main thread.
    const send = (kind, touch, event) => {
      const box = canvas.getBoundingClientRect();
      app.ui_touch(kind, touch.clientX - box.left, touch.clientY - box.top, event.timeStamp);
    };
    const find = (list) => Array.from(list).find((touch) => touch.identifier === finger);
    const onTouch = (event) => {
      if (event.target !== canvas) return;
      event.stopPropagation();   // capture phase on window: GLFW's listeners on the canvas never see it
      lastTouch = performance.now();
      if (event.type === 'touchstart') {
        if (event.touches.length === 1) {
          finger = event.changedTouches[0].identifier;
          send(START, event.changedTouches[0], event);
        } else if (finger !== null) {
          const touch = find(event.touches);
          if (touch) send(CANCEL, touch, event);
          finger = null;
        }
      } else if (event.type === 'touchmove') {
        const touch = finger !== null && find(event.changedTouches);
        if (touch) send(MOVE, touch, event);
      } else {
        const touch = finger !== null && find(event.changedTouches);
        if (touch) send(event.type === 'touchend' ? END : CANCEL, touch, event);
        if (touch) finger = null;
        if (event.type === 'touchend' && event.cancelable && event.touches.length === 0) event.preventDefault();
      }
    };
    for (const type of ['touchstart', 'touchmove', 'touchend', 'touchcancel'])
      window.addEventListener(type, onTouch, { capture: true, passive: false });
    canvas.addEventListener('contextmenu', (event) => {
      if (performance.now() - lastTouch < 1500) event.preventDefault();
    });
  }

  // A finger as the main pointer (matchMedia): the app draws larger text and targets (ui/main.cpp,
  // UiScale). Read by the app each frame from module.coarsePointer.
  function watchPointer(module) {
    const query = window.matchMedia ? window.matchMedia('(pointer: coarse)') : null;
    const update = () => { module.coarsePointer = query !== null && query.matches; };
    update();
    if (query && query.addEventListener) query.addEventListener('change', update);
  }

  // A pinch-zoom (the visual viewport's scale): once it has settled (no resize for ZOOM_SETTLE_MS), the app
  // draws the canvas at that many more device pixels, within its caps (ui/main.cpp, ZoomedUiScale), so zoomed
  // text is drawn sharp instead of enlarged. Read by the app each frame from module.zoomScale.
  const ZOOM_SETTLE_MS = 200;
  function watchZoom(module) {
    const viewport = window.visualViewport;
    module.zoomScale = 1;
    if (!viewport) return;
    let timer = 0;
    viewport.addEventListener('resize', () => {
      clearTimeout(timer);
      timer = setTimeout(() => { module.zoomScale = Math.max(1, viewport.scale || 1); }, ZOOM_SETTLE_MS);
    });
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
      presets: async () => JSON.parse((await tools(module)).presets()),  // a promise: see maxfit
      version: () => module.version(),
      uiLayout: () => JSON.parse(module.ui_layout()),
      uiTotal: () => JSON.parse(module.ui_total()),
      uiScenario: () => JSON.parse(module.ui_scenario()),
      uiState: () => JSON.parse(module.ui_state()),
      uiFrameTimes: () => JSON.parse(module.ui_frame_times()),
      // The core's decisions, called at once (the page computes its panels after the first frame;
      // tests compare the two).
      fit: (scenario) => JSON.parse(module.fit(text(scenario))),
      // The served page's module fetches these first (toolsLoader); promises either way.
      maxfit: async (scenario) => JSON.parse((await tools(module)).maxfit(text(scenario))),
      sweep: async (request) => JSON.parse((await tools(module)).sweep(text(request))),
      exportConfig: async (request) => JSON.parse((await tools(module)).exportConfig(text(request))),
      wasmMemoryBytes: () => module.HEAP8.buffer.byteLength,
    };
  }

  // The parts of the core a user asks for (ui/tools.h: the config readers and writers, the planner, the
  // sweeps): the served page's module leaves them out, and this fetches them as a second module
  // (gpumem_tools.js + .wasm) the first time the app asks for one (a config imported; "Configs to run",
  // the planner or the sweeps opened), then tells it (ui_tools_arrived): module.gpumemTools once here,
  // module.gpumemToolsFailure if they could not be had. The offline bundle's module links them in and
  // never asks.
  function toolsLoader(module) {
    let loading = null;
    return () => {
      loading ??= new Promise((resolve, reject) => {
        const script = document.createElement('script');
        script.src = 'gpumem_tools.js';
        script.onload = resolve;
        script.onerror = () => reject(new Error('gpumem_tools.js could not be fetched'));
        document.head.append(script);
      }).then(() => createGpumemTools({ printErr: (text) => console.error(text) })).then((instance) => {
        module.gpumemTools = instance;
      }, (error) => {
        module.gpumemToolsFailure = `${(error && error.message) || error}; reload the page to try again`;
      }).then(() => module.ui_tools_arrived());
      return loading;
    };
  }

  // The module with those parts: the app's own (offline bundle) or the fetched one.
  async function tools(module) {
    if (typeof module.exportConfig === 'function') return module;
    await module.loadGpumemTools();
    if (!module.gpumemTools) throw new Error(`the config tools could not be fetched: ${module.gpumemToolsFailure}`);
    return module.gpumemTools;
  }

  // The offline bundle's .wasm: base64 text in a data block that is never executed, gzip-compressed
  // by web/bundle.mjs (a .wasm starts with "\0asm", gzip with 1f 8b) and unpacked here with the
  // browser's own DecompressionStream. Null in the served page.
  async function takeEmbeddedWasm() {
    const block = document.getElementById('gpumem-wasm');
    if (!block) return null;
    const text = atob(block.textContent.trim());
    block.remove();   // the base64 copy is no longer needed
    const bytes = new Uint8Array(text.length);
    for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
    if (bytes[0] !== 0x1f || bytes[1] !== 0x8b) return bytes;
    if (typeof DecompressionStream !== 'function')
      throw new Error('this browser cannot unpack the offline page (it has no DecompressionStream); use the online page or a newer browser');
    const unpacked = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));
    return new Uint8Array(await new Response(unpacked).arrayBuffer());
  }

  // The app's .wasm: downloaded whole (its bytes counted for the progress bar; index.html preloads it,
  // so the download starts with the scripts), then compiled from the bytes. Not instantiateStreaming:
  // measured in headless Chromium (tests/bench/page.mjs's start-up figures, 7 interleaved loads, twice),
  // a streamed module reached its first frame 20-27 ms later and had the decision panels ready 180-290 ms
  // later than the same bytes compiled at once (issue #29). The offline bundle's embedded bytes likewise.
  async function instantiateApp(embedded, imports) {
    return WebAssembly.instantiate(embedded ?? await fetchWithProgress('gpumem_app.wasm', showProgress), imports);
  }

  async function start() {
    showProgress(0, 0);
    const unpackStart = performance.now();
    const embedded = await takeEmbeddedWasm();
    window.gpumemOffline = embedded !== null;
    // unpackMs: the offline bundle's decoding of its embedded .wasm (0 in the served page).
    const timings = { steps: {}, unpackMs: embedded === null ? 0 : performance.now() - unpackStart };
    window.gpumemTimings = timings;

    // MODULARIZE: this object becomes the module itself (its functions are added to it).
    const module = {
      canvas,
      // Emscripten's hook for bringing the instance: ours streams (above). Returns {} (not yet).
      instantiateWasm(imports, receiveInstance) {
        instantiateApp(embedded, imports).then(({ instance, module: compiled }) => {
          timings.instantiatedMs = performance.now();
          loadingText.textContent = 'Starting\u2026';
          receiveInstance(instance, compiled);
        }).catch(fail);
        return {};
      },
      onRuntimeInitialized() {
        timings.runtimeMs = performance.now();
      },
      postRun: [() => { timings.mainMs = performance.now(); }],
      // ui/main.cpp's start-up steps (window, imgui, app; frame_setup, frame_app), when each ended.
      onStartupStep(name) { timings.steps[name] = performance.now(); },
      page: null,
      print: (text) => console.log(text),
      printErr: (text) => console.error(text),
      onAbort: (what) => fail(new Error(`aborted: ${what}`)),
      onFirstFrame() {
        window.gpumem = wrap(module);
        acceptDrops(module);
        forwardTouches(module);
        loading.classList.add('hidden');
        timings.firstFrameMs = performance.now();
        resolveReady({ firstFrameMs: timings.firstFrameMs });
      },
    };
    module.page = pageServices(module);
    module.loadGpumemTools = toolsLoader(module);
    keyboard.install();
    copyLinkButton();
    watchPointer(module);
    watchZoom(module);
    migrateStorage();
    // Before the app's first estimate rewrites the URL; main() applies it before that estimate
    // (ui/main.cpp), so the first frame already shows the link's or the saved scenario.
    module.openRequest = JSON.stringify(openRequest());
    await createGpumemApp(module);
  }

  if (typeof createGpumemApp !== 'function' || typeof WebAssembly !== 'object') {
    fail(new Error('this browser cannot run WebAssembly, or gpumem_app.js did not load'));
  } else {
    start().catch(fail);
  }
})();
