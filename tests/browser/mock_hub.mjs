// A stand-in for the Hugging Face Hub with its URL layout, for the page's tests (the Hub base URL
// is a setting: hub= in a link). It serves real config.json files from presets/ and answers the
// ways the real Hub fails, chosen by the repository's organisation:
//
//   /{org}/{name}/resolve/{rev}/config.json     /api/models/{org}/{name}
//
//   any bundled or pending preset id   200, its config.json; the API reports its published count
//   mirror/{name}  200, the config.json of the preset whose name part is {name} (an id no preset
//                  answers to, so the page must fetch it)
//   gated/*        401 without a token, 403 with a token other than GOOD_TOKEN, 200 with it
//   missing/*      404 with X-Error-Code: RepoNotFound
//   slow/*         never answers (the page's timeout fires)
//   cut/*          200 with the first half of a real config.json (truncated)
//   html/*         200 with an HTML page (not JSON)
//   busy/*         429 with Retry-After: 30
//   down/*         503
//   bad/*          200 with a JSON object that is not a model config (no model_type)
//   hop/{name}     307 to options.redirectTo's mirror/{name} (another origin)
//   offby/{name}   as mirror/{name}, but the API reports 5 % more parameters than the exact count
//   noconfig/*     404 with X-Error-Code: EntryNotFound (a repository without config.json)
//   revision missing-rev of any model: 404 with X-Error-Code: RevisionNotFound
//
// A config.json answer carries X-Repo-Commit (sha1 of "id@revision", or the revision itself when
// it is a commit) and an ETag (sha1 of the body), as the Hub's do, so the CLI can fill an HF cache.
//
// Every request is recorded (method, path, authorization, referer, cookie) for privacy checks.
// startMockHub({ tls: true }) serves https with tests/browser/fixtures' self-signed loopback
// certificate (the browser tests accept it), for what only an https Hub may receive: the token.
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { createServer } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

// Node's own modules only: the CLI stage (tests/cli, tests/compat) loads this file without
// tests/browser's npm install (tests/cli/imports.test.mjs checks it).
const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

export const GOOD_TOKEN = 'hf_test_good_token_1234567890';

function loadRecords() {
  const records = new Map();
  for (const dir of ['presets/models', 'presets/pending']) {
    for (const file of readdirSync(join(repo, dir)).filter((f) => f.endsWith('.json'))) {
      const record = JSON.parse(readFileSync(join(repo, dir, file), 'utf8'));
      if (record.model_id && record.config) records.set(record.model_id.toLowerCase(), record);
    }
  }
  return records;
}

// Resolves with { url, requests, close() }. options: { tls, redirectTo, records }: records, a list of
// { model_id, config, total_params }, served as the presets are (repositories no preset answers to).
export function startMockHub(options = {}) {
  const records = loadRecords();
  for (const record of options.records ?? []) records.set(record.model_id.toLowerCase(), record);
  const llama = records.get('meta-llama/llama-3.1-8b');
  const byName = (name) => [...records.values()].find((r) => r.model_id.split('/')[1].toLowerCase() === name.toLowerCase());
  const requests = [];
  const fixture = (name) => readFileSync(join(repo, 'tests', 'browser', 'fixtures', name));
  const tls = options.tls ? { key: fixture('loopback-key.pem'), cert: fixture('loopback-cert.pem') } : null;
  const handle = (req, res) => {
    requests.push({
      method: req.method, path: req.url, authorization: req.headers.authorization ?? null,
      referer: req.headers.referer ?? null, cookie: req.headers.cookie ?? null, origin: req.headers.origin ?? null,
    });
    const cors = {
      'Access-Control-Allow-Origin': '*',
      'Access-Control-Allow-Headers': 'Authorization',
      'Access-Control-Expose-Headers': 'X-Error-Code, Retry-After, X-Repo-Commit, ETag',
    };
    const send = (status, body, headers = {}) => {
      res.writeHead(status, { 'Content-Type': 'application/json', ...cors, ...headers });
      res.end(typeof body === 'string' ? body : JSON.stringify(body));
    };
    if (req.method === 'OPTIONS') return send(204, '');

    const path = decodeURIComponent(req.url.split('?')[0]);
    let match = path.match(/^\/api\/models\/([^/]+)\/([^/]+)$/);
    if (match) {
      const byMirror = match[1] === 'mirror' || match[1] === 'offby';
      const record = byMirror ? byName(match[2]) : records.get(`${match[1]}/${match[2]}`.toLowerCase());
      if (!record) return send(404, { error: 'Repository not found' }, { 'X-Error-Code': 'RepoNotFound' });
      const total = match[1] === 'offby' ? Math.round(record.total_params * 1.05) : record.total_params;
      return send(200, { id: record.model_id, gated: record.gated ? 'manual' : false, safetensors: { total } });
    }
    match = path.match(/^\/([^/]+)\/([^/]+)\/resolve\/([^/]+)\/config\.json$/);
    if (!match) return send(404, { error: 'Entry not found' }, { 'X-Error-Code': 'EntryNotFound' });
    const [, org] = match;
    const id = `${match[1]}/${match[2]}`;
    const revision = match[3];
    if (revision === 'missing-rev')
      return send(404, { error: 'Invalid rev id' }, { 'X-Error-Code': 'RevisionNotFound' });
    const sha1 = (text) => createHash('sha1').update(text).digest('hex');
    const commit = /^[0-9a-f]{40}$/.test(revision) ? revision : sha1(`${id}@${revision}`);
    const sendConfig = (config) => {
      const body = JSON.stringify(config, null, 2);
      return send(200, body, { 'X-Repo-Commit': commit, ETag: `"${sha1(body)}"` });
    };
    switch (org) {
      case 'gated':
        if (!req.headers.authorization)
          return send(401, { error: `Access to model ${id} is restricted. You must be authenticated.` },
                      { 'X-Error-Code': 'GatedRepo' });
        if (req.headers.authorization !== `Bearer ${GOOD_TOKEN}`)
          return send(403, { error: `Access to model ${id} is restricted.` }, { 'X-Error-Code': 'GatedRepo' });
        return sendConfig(llama.config);
      case 'noconfig':
        return send(404, { error: 'Entry not found' }, { 'X-Error-Code': 'EntryNotFound' });
      case 'missing':
        return send(404, { error: 'Repository not found' }, { 'X-Error-Code': 'RepoNotFound' });
      case 'slow':
        return undefined;   // never answers
      case 'cut': {
        const text = JSON.stringify(llama.config, null, 2);
        return send(200, text.slice(0, Math.floor(text.length / 2)));
      }
      case 'html':
        return send(200, '<!doctype html><title>Hugging Face</title><p>Not a config', { 'Content-Type': 'text/html' });
      case 'busy':
        return send(429, { error: 'Too many requests' }, { 'Retry-After': '30' });
      case 'down':
        return send(503, { error: 'Service unavailable' });
      case 'bad':
        return send(200, { hello: 'world' });
      case 'hop':
        return send(307, '', { Location: `${options.redirectTo}/mirror/${match[2]}/resolve/main/config.json` });
      case 'mirror':
      case 'offby': {
        const record = byName(match[2]);
        if (!record) return send(404, { error: 'Repository not found' }, { 'X-Error-Code': 'RepoNotFound' });
        return sendConfig(record.config);
      }
      default: {
        const record = records.get(id.toLowerCase());
        if (!record) return send(404, { error: 'Repository not found' }, { 'X-Error-Code': 'RepoNotFound' });
        return sendConfig(record.config);
      }
    }
  };
  const server = tls ? createTlsServer(tls, handle) : createServer(handle);
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      resolve({
        url: `${tls ? 'https' : 'http'}://127.0.0.1:${port}`,
        requests,
        close: () => new Promise((done) => { server.closeAllConnections(); server.close(done); }),
      });
    });
  });
}
