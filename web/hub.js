// gpumem's Hugging Face Hub client for the page: turn what a user typed (an id or a Hub URL) into a
// checked repository id, fetch its config.json and the Hub's own parameter count, and classify
// every way that can fail into one message the page shows with a retry. No dependencies.
//
//   gpumemHub.parseModelInput(text)        -> { id, revision } or throws HubInputError
//   gpumemHub.normalizeBase(url)           -> "https://huggingface.co" (no trailing slash) or throws
//   gpumemHub.tokenOrigin(base, trusted)   -> the origin the token may go to, or null
//   gpumemHub.fetchModel(options)          -> Promise<{ ok: true, id, revision, config, api, origin,
//                                                       token_withheld } |
//                                                     { ok: false, kind, status, message, retryable,
//                                                       origin, token_withheld }>
//   (the timeout: options.timeoutMs, else globalThis.gpumemHubTimeoutMs, else 15 s)
//
// Privacy: requests go only to the Hub base (default https://huggingface.co; the page's CSP
// allows only that, its mirrors and loopback), with no referrer and no cookies. The access token
// goes only to an https origin the user trusts: https://huggingface.co, or one they confirmed in
// the page this visit (options.trustedOrigins). Any other base (a hub= link, a plain-http local
// server) gets the request without it, and the answer says token_withheld so the page can ask.
// The token is never logged, never put in a URL and never part of an error message.
//
// Loaded as a classic script by the page (it defines globalThis.gpumemHub) and by node's tests.
'use strict';

(function (root) {
  const DEFAULT_BASE = 'https://huggingface.co';
  const DEFAULT_TIMEOUT_MS = 15000;
  const MAX_CONFIG_BYTES = 4 * 1024 * 1024;   // the largest real config.json is a few tens of kB

  class HubInputError extends Error {}

  // The Hub's repository-name rule (huggingface_hub's validate_repo_id): letters, digits, '-',
  // '_', '.'; at most 96 characters; no '--' or '..'; not starting or ending with '-' or '.'.
  const NAME = /^[A-Za-z0-9_](?:[A-Za-z0-9_.-]{0,94}[A-Za-z0-9_])?$/;
  function checkName(part, what) {
    if (!NAME.test(part) || part.includes('--') || part.includes('..'))
      throw new HubInputError(`${what} "${part}" is not a valid Hub name: letters, digits, ` +
        `'-', '_' and '.', at most 96 characters, no '--' or '..'`);
  }
  // A branch, tag or commit: git ref characters only, no '..', no leading '/' or '-'.
  const REVISION = /^[A-Za-z0-9_][A-Za-z0-9_./-]{0,127}$/;
  function checkRevision(revision) {
    if (!REVISION.test(revision) || revision.includes('..') || revision.includes('//'))
      throw new HubInputError(`revision "${revision}" is not a branch, tag or commit name`);
  }

  // "Qwen/Qwen3-8B", "gpt2", "https://huggingface.co/Qwen/Qwen3-8B",
  // ".../Qwen/Qwen3-8B/tree/v1", ".../blob/main/config.json", ".../resolve/main/config.json".
  function parseModelInput(text, revision) {
    let input = String(text ?? '').trim();
    let rev = revision ? String(revision).trim() : '';
    if (input === '') throw new HubInputError('type a Hub model id such as Qwen/Qwen3-8B, or paste its URL');
    if (input.length > 512) throw new HubInputError('that is too long to be a Hub model id or URL');
    if (/^[a-z][a-z0-9+.-]*:/i.test(input)) {
      let url;
      try {
        url = new URL(input);
      } catch {
        throw new HubInputError(`"${input}" is not a URL`);
      }
      if (url.protocol !== 'https:' && url.protocol !== 'http:')
        throw new HubInputError(`only https:// Hub links are understood, not ${url.protocol}`);
      input = url.pathname.replace(/^\/+/, '');
      try {
        input = decodeURIComponent(input);
      } catch {
        throw new HubInputError('the link has a broken %-escape');
      }
    }
    input = input.replace(/^models\//, '').replace(/\/+$/, '');
    const parts = input.split('/');
    let id;
    if (parts.length >= 3 && ['tree', 'blob', 'resolve'].includes(parts[2])) {
      id = parts.slice(0, 2);
      if (!rev && parts.length >= 4) rev = parts[3];
    } else if (parts.length >= 2 && ['tree', 'blob', 'resolve'].includes(parts[1])) {
      id = parts.slice(0, 1);   // a legacy model without an organisation: gpt2/tree/main
      if (!rev && parts.length >= 3) rev = parts[2];
    } else if (parts.length <= 2) {
      id = parts;
    } else {
      throw new HubInputError(`"${input}" has too many parts: a Hub model id is "organisation/name"`);
    }
    id.forEach((part, i) => checkName(part, i === 0 && id.length === 2 ? 'organisation' : 'model name'));
    if (!rev) rev = 'main';
    checkRevision(rev);
    return { id: id.join('/'), revision: rev };
  }

  function normalizeBase(text) {
    const raw = String(text ?? '').trim() || DEFAULT_BASE;
    let url;
    try {
      url = new URL(raw);
    } catch {
      throw new HubInputError(`Hub address "${raw}" is not a URL (for example ${DEFAULT_BASE})`);
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:')
      throw new HubInputError(`Hub address must be http(s), not ${url.protocol}`);
    if (url.username || url.password)
      throw new HubInputError('Hub address must not carry a user name or password');
    if (url.search || url.hash) throw new HubInputError('Hub address must not have a ?query or #fragment');
    return (url.origin + url.pathname).replace(/\/+$/, '');
  }

  // Each path segment escaped on its own: the id's '/' stays a separator, nothing else can.
  function modelPath(id) {
    return id.split('/').map(encodeURIComponent).join('/');
  }
  function configUrl(base, id, revision) {
    return `${base}/${modelPath(id)}/resolve/${encodeURIComponent(revision)}/config.json`;
  }
  function apiUrl(base, id) {
    return `${base}/api/models/${modelPath(id)}`;
  }

  // The origin `base` would receive a token on, or null when it may not: https only, and either
  // the Hub itself or an origin in `trusted` (those the user confirmed in the page).
  function tokenOrigin(base, trusted) {
    let url;
    try {
      url = new URL(normalizeBase(base));
    } catch {
      return null;
    }
    if (url.protocol !== 'https:') return null;
    const list = trusted ? [...trusted] : [];
    return url.origin === DEFAULT_BASE || list.includes(url.origin) ? url.origin : null;
  }

  function failure(kind, message, extra = {}) {
    const retryable = ['timeout', 'network', 'rate_limited', 'server', 'truncated'].includes(kind);
    return { ok: false, kind, message, retryable, status: 0, ...extra };
  }

  // What the Hub's status means for this id. The Hub answers 401 both for gated or private
  // models without a token and, to hide which private repositories exist, for ids that do not
  // exist at all; its X-Error-Code header (RepoNotFound, GatedRepo) tells them apart when the
  // response lets the page read it.
  function httpFailure(response, id, hasToken) {
    const status = response.status;
    const code = response.headers.get('X-Error-Code') || '';
    if (code === 'RepoNotFound' || status === 404)
      return failure('not_found', `${id} was not found on the Hub (HTTP ${status}): check the spelling ` +
        'and the organisation, or pick a bundled preset', { status });
    if (status === 401)
      return failure('unauthorized', hasToken
        ? `the Hub refused the access token for ${id} (HTTP 401): check that it is valid and has read access`
        : `${id} needs a Hub account (HTTP 401): it is gated or private. Add an access token, or use a ` +
          'bundled preset or an ungated mirror of it', { status });
    if (status === 403)
      return failure('forbidden', `${id} is gated and this token has no access yet (HTTP 403): accept ` +
        "the model's licence on its Hub page, or use a bundled preset or an ungated mirror", { status });
    if (status === 429) {
      const after = Number(response.headers.get('Retry-After'));
      const wait = Number.isFinite(after) && after > 0 ? ` Try again in ${Math.ceil(after)} s.` : ' Try again shortly.';
      return failure('rate_limited', `the Hub is rate-limiting requests (HTTP 429).${wait}`, { status, retryAfter: after || 0 });
    }
    if (status >= 500)
      return failure('server', `the Hub is having trouble (HTTP ${status}); try again in a moment`, { status });
    return failure('http', `the Hub answered HTTP ${status} for ${id}`, { status });
  }

  async function readBody(response, limit) {
    const length = Number(response.headers.get('Content-Length'));
    if (Number.isFinite(length) && length > limit) return { tooLarge: true };
    const text = await response.text();
    if (text.length > limit) return { tooLarge: true };
    return { text };
  }

  // Fetches config.json (required) and the Hub's model info (optional: only its safetensors
  // parameter count is used, as a cross-check). options: { base, id, revision, token,
  // trustedOrigins (origins the user confirmed for the token; the Hub's own needs none),
  // timeoutMs, fetch (for tests), offline (true in the offline bundle) }.
  async function fetchModel(options) {
    const fetchImpl = options.fetch || root.fetch;
    let base;
    let target;
    try {
      base = normalizeBase(options.base);
      target = parseModelInput(options.id, options.revision);
    } catch (error) {
      return failure('input', error.message);
    }
    const { id, revision } = target;
    const origin = new URL(base).origin;
    const sendToken = Boolean(options.token) && tokenOrigin(base, options.trustedOrigins) !== null;
    const withheld = Boolean(options.token) && !sendToken;
    const result = await fetchFrom(fetchImpl, base, id, revision, sendToken ? options.token : '', options);
    if (withheld && result.kind === 'unauthorized')
      result.message = `${id} needs a Hub account (HTTP 401), and your access token was not sent to ${origin}: ` +
        (origin.startsWith('https:') ? 'send it there only if you trust that address, or use huggingface.co'
          : 'a token never goes over plain http; use an https address or huggingface.co');
    return { ...result, origin, token_withheld: withheld };
  }

  async function fetchFrom(fetchImpl, base, id, revision, token, options) {
    if (options.offline)
      return failure('offline', 'this is the offline copy of gpumem: it cannot reach the Hub. Use a ' +
        'bundled preset, or paste the model\'s config.json');
    if (root.navigator && root.navigator.onLine === false)
      return failure('network', 'the browser is offline: the Hub cannot be reached. Bundled presets ' +
        'and pasted config.json files still work');

    const timeoutMs = options.timeoutMs || root.gpumemHubTimeoutMs || DEFAULT_TIMEOUT_MS;
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), timeoutMs);
    const headers = token ? { Authorization: `Bearer ${token}` } : {};
    const init = { headers, referrerPolicy: 'no-referrer', credentials: 'omit', cache: 'no-store',
                   redirect: 'follow', signal: controller.signal };

    const api = (async () => {  // never fails the fetch: it only adds a cross-check
      try {
        const response = await fetchImpl(apiUrl(base, id), init);
        if (!response.ok) return null;
        const body = await readBody(response, MAX_CONFIG_BYTES);
        if (!body.text) return null;
        const info = JSON.parse(body.text);
        const total = info && info.safetensors && info.safetensors.total;
        return {
          safetensors_total: Number.isSafeInteger(total) && total > 0 ? total : null,
          gated: info && info.gated ? String(info.gated) : null,
        };
      } catch {
        return null;
      }
    })();

    try {
      let response;
      try {
        response = await fetchImpl(configUrl(base, id, revision), init);
      } catch (error) {
        if (controller.signal.aborted)
          return failure('timeout', `the Hub did not answer within ${Math.round(timeoutMs / 1000)} s; ` +
            'check the connection and try again');
        // fetch() rejects with a TypeError for DNS, refused connections, TLS and CORS failures
        // alike; the browser hides which one from the page.
        return failure('network', `could not reach the Hub at ${base} (network error, blocked ` +
          'request or CORS); check the connection, or use a bundled preset');
      }
      if (!response.ok) return httpFailure(response, id, Boolean(token));
      let body;
      try {
        body = await readBody(response, MAX_CONFIG_BYTES);
      } catch {
        if (controller.signal.aborted)
          return failure('timeout', `the Hub stopped sending ${id}'s config.json after ` +
            `${Math.round(timeoutMs / 1000)} s; try again`);
        return failure('truncated', `the connection broke while reading ${id}'s config.json; try again`);
      }
      if (body.tooLarge)
        return failure('too_large', `${id}'s config.json is larger than 4 MiB: that is not a model config`);
      let config;
      try {
        config = JSON.parse(body.text);
      } catch (error) {
        const cut = body.text.trim() !== '' && /^\s*[{[]/.test(body.text);
        return failure(cut ? 'truncated' : 'malformed', cut
          ? `${id}'s config.json arrived cut off or is not valid JSON (${error.message}); try again`
          : `what the Hub sent for ${id}'s config.json is not JSON: is it a model repository?`);
      }
      if (config === null || typeof config !== 'object' || Array.isArray(config))
        return failure('malformed', `${id}'s config.json is not a JSON object`);
      // The cross-check may lag: wait for it a little, never for the whole timeout.
      const late = new Promise((resolve) => setTimeout(() => resolve(null), 3000));
      return { ok: true, id, revision, config, api: await Promise.race([api, late]) };
    } finally {
      clearTimeout(timer);
    }
  }

  const hub = { DEFAULT_BASE, HubInputError, parseModelInput, normalizeBase, tokenOrigin, configUrl, apiUrl, fetchModel };
  root.gpumemHub = hub;
  if (typeof module === 'object' && module.exports) module.exports = hub;
})(typeof globalThis !== 'undefined' ? globalThis : this);
