// `gpumem --model ID` for a model that is not bundled: a local config.json or folder, the HF cache,
// the Hub. Runs the CLI as a subprocess against the mock Hub (tests/browser/mock_hub.mjs, named by
// HF_ENDPOINT) with a throw-away HF_HOME, and checks what a user sees and what the Hub receives.
//
//   node --test tests/cli/hub.test.mjs
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';

import { GOOD_TOKEN, startMockHub } from '../browser/mock_hub.mjs';
import { startRecordingProxy } from './hostile_hub.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..', '..');
const cli = path.resolve(repo, process.env.GPUMEM_CLI || 'build/native/core/cli/gpumem');
// Qwen/Qwen2.5-7B's exact count, as presets/models/Qwen__Qwen2.5-7B.json records it (the Hub's
// safetensors total): mirror/Qwen2.5-7B serves that preset's config.json.
const QWEN_7B = 7615616512;

let hub;
let other;   // a second mock on another port: where a redirect may try to take the token
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gpumem-hub-cli-'));

before(async () => {
  other = await startMockHub();
  hub = await startMockHub({ redirectTo: other.url });
});
after(async () => {
  await hub?.close();
  await other?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

// Runs the CLI with a clean Hub environment plus `env`; resolves with { code, stdout, stderr, all }.
// Asynchronous: the mock Hub answers in this same process.
function run(args, env = {}, timeoutMs = 30_000) {
  const clean = Object.fromEntries(Object.entries(process.env)
    .filter(([k]) => !/^(HF_|HUGGING)/.test(k) && !/^(https?|all|no)_proxy$/i.test(k)));
  return new Promise((resolve, reject) => {
    const child = spawn(cli, args, { env: { ...clean, HF_ENDPOINT: hub.url, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, all: stdout + stderr });
    });
  });
}

const home = (name) => path.join(tmp, name);
const total = (r) => JSON.parse(r.stdout).total;

test('a Hub id is fetched once, written to the HF cache in huggingface_hub\'s layout, then read from it', async () => {
  const env = { HF_HOME: home('cache') };
  const first = await run(['params', '--model', 'mirror/Qwen2.5-7B', '--json'], env);
  assert.equal(first.code, 0, first.all);
  assert.equal(total(first), QWEN_7B);
  assert.match(first.stderr, /config\.json from the Hub \(http:\/\/127\.0\.0\.1:\d+\)/);

  // models--mirror--Qwen2.5-7B/{refs/main, snapshots/COMMIT/config.json -> ../../blobs/ETAG}
  const repoDir = path.join(home('cache'), 'hub', 'models--mirror--Qwen2.5-7B');
  const commit = fs.readFileSync(path.join(repoDir, 'refs', 'main'), 'utf8');
  assert.match(commit, /^[0-9a-f]{40}$/, 'refs/main holds the commit, no newline');
  const link = path.join(repoDir, 'snapshots', commit, 'config.json');
  const target = fs.readlinkSync(link);
  assert.match(target, /^\.\.\/\.\.\/blobs\/[0-9a-f]{40}$/, 'the snapshot links to the blob named by its ETag');
  assert.equal(JSON.parse(fs.readFileSync(link, 'utf8')).model_type, 'qwen2');

  // The network blocked (nothing listens at HF_ENDPOINT): the cache answers.
  const requests = hub.requests.length;
  const cached = await run(['params', '--model', 'mirror/Qwen2.5-7B', '--json'], { ...env, HF_ENDPOINT: 'http://127.0.0.1:9' });
  assert.equal(cached.code, 0, cached.all);
  assert.equal(total(cached), QWEN_7B);
  assert.match(cached.stderr, /from the HF cache/);
  // HF_HUB_OFFLINE=1: the cache, and not one request.
  const offline = await run(['estimate', '--model', 'mirror/Qwen2.5-7B', '--json'], { ...env, HF_HUB_OFFLINE: '1' });
  assert.equal(offline.code, 0, offline.all);
  assert.equal(JSON.parse(offline.stdout).parameters.total, QWEN_7B);
  assert.equal(hub.requests.length, requests, 'a cache hit makes no request');
  // HF_HUB_CACHE wins over HF_HOME; offline with an empty cache says how to fix it.
  const miss = await run(['estimate', '--model', 'mirror/Qwen2.5-7B'], { ...env, HF_HUB_CACHE: home('empty'), HF_HUB_OFFLINE: '1' });
  assert.equal(miss.code, 1);
  assert.match(miss.stderr, /is not in the HF cache at .*empty, and HF_HUB_OFFLINE=1 keeps gpumem off the network/);
  assert.equal(hub.requests.length, requests);
});

test('Hub URLs and revisions: the id and revision are read from the URL, --revision wins, each revision cached', async () => {
  const env = { HF_HOME: home('revisions') };
  for (const url of ['https://huggingface.co/mirror/gemma-2-9b', 'https://huggingface.co/mirror/gemma-2-9b/blob/main/config.json',
    'https://huggingface.co/mirror/gemma-2-9b/tree/main']) {
    const r = await run(['params', '--model', url, '--json'], env);
    assert.equal(r.code, 0, `${url}: ${r.all}`);
    assert.match(r.stderr, /mirror\/gemma-2-9b \(main\)/, url);
  }
  const mark = hub.requests.length;
  const tagged = await run(['params', '--model', 'https://huggingface.co/mirror/gemma-2-9b/tree/v1', '--json'], env);
  assert.equal(tagged.code, 0, tagged.all);
  assert.ok(hub.requests.slice(mark).some((r) => r.path === '/mirror/gemma-2-9b/resolve/v1/config.json'));
  const flag = await run(['params', '--model', 'mirror/gemma-2-9b', '--revision', 'v2', '--json'], env);
  assert.equal(flag.code, 0, flag.all);
  assert.ok(hub.requests.some((r) => r.path === '/mirror/gemma-2-9b/resolve/v2/config.json'));
  const refs = fs.readdirSync(path.join(home('revisions'), 'hub', 'models--mirror--gemma-2-9b', 'refs')).sort();
  assert.deepEqual(refs, ['main', 'v1', 'v2']);
  // A bundled preset with --revision is fetched: the preset is one revision, the flag names another.
  const pinned = await run(['params', '--model', 'Qwen/Qwen2.5-7B', '--revision', 'v1', '--json'], env);
  assert.equal(pinned.code, 0, pinned.all);
  assert.match(pinned.stderr, /from the Hub/);
  const missing = await run(['params', '--model', 'mirror/gemma-2-9b', '--revision', 'missing-rev'], env);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /has no revision "missing-rev" \(HTTP 404\)/);
  for (const bad of ['../../etc/passwd', 'org/name/extra', 'a--b/c', 'mirror/x', 'mirror/gemma-2-9b']) {
    const r = await run(['params', '--model', bad, ...(bad === 'mirror/gemma-2-9b' ? ['--revision', '../main'] : [])], env);
    assert.equal(r.code, 1, `${bad}: ${r.all}`);
  }
});

test('gated models: what to do without a token, with a wrong one, and the token from HF_TOKEN or the token file', async () => {
  const env = { HF_HOME: home('gated') };
  const none = await run(['estimate', '--model', 'gated/llama'], env);
  assert.equal(none.code, 1);
  assert.match(none.stderr, /gated\/llama needs a Hub account \(HTTP 401\).*Accept its licence at http:\/\/127\.0\.0\.1:\d+\/gated\/llama.*set HF_TOKEN, or run `huggingface-cli login` \(it writes .*gated\/token\)/);
  const wrong = await run(['estimate', '--model', 'gated/llama'], { ...env, HF_TOKEN: 'hf_wrong_secret' });
  assert.equal(wrong.code, 1);
  assert.match(wrong.stderr, /is gated and the token from HF_TOKEN has no access yet \(HTTP 403\): accept its licence/);
  assert.ok(!wrong.all.includes('hf_wrong_secret'), 'the token is never printed');

  const good = await run(['estimate', '--model', 'gated/llama', '--json'], { ...env, HF_TOKEN: GOOD_TOKEN });
  assert.equal(good.code, 0, good.all);
  assert.ok(!good.all.includes(GOOD_TOKEN), 'not in the output');
  fs.writeFileSync(path.join(home('gated'), 'token'), `${GOOD_TOKEN}\n`);
  fs.rmSync(path.join(home('gated'), 'hub'), { recursive: true, force: true });
  const file = await run(['estimate', '--model', 'gated/llama', '--json'], env);
  assert.equal(file.code, 0, `the token file under HF_HOME: ${file.all}`);
  assert.ok(hub.requests.filter((r) => r.path.startsWith('/gated/')).some((r) => r.authorization === `Bearer ${GOOD_TOKEN}`));
});

test('the token goes only to HF_ENDPOINT\'s origin: a redirect to another host is followed without it', async () => {
  const mark = other.requests.length;
  const r = await run(['params', '--model', 'hop/Qwen2.5-7B', '--json'], { HF_HOME: home('hop'), HF_TOKEN: GOOD_TOKEN });
  assert.equal(r.code, 0, r.all);
  assert.equal(total(r), QWEN_7B);
  const there = other.requests.slice(mark);
  assert.ok(there.some((q) => q.path === '/mirror/Qwen2.5-7B/resolve/main/config.json'), 'the redirect was followed');
  assert.ok(there.every((q) => q.authorization === null), 'no token at the other host');
  assert.ok(hub.requests.some((q) => q.path.startsWith('/hop/') && q.authorization === `Bearer ${GOOD_TOKEN}`));
  // Plain http to a host that is not this computer gets no token either (nothing listens there:
  // the request fails, and the message says the token was kept back only when the Hub asks for one).
  const remote = await run(['params', '--model', 'gated/llama'],
    { HF_HOME: home('remote'), HF_TOKEN: GOOD_TOKEN, HF_ENDPOINT: 'http://192.0.2.1:9', HF_HUB_DOWNLOAD_TIMEOUT: '1' });
  assert.equal(remote.code, 1);
  assert.ok(!remote.all.includes(GOOD_TOKEN));
  // Through a proxy (http_proxy), plain http to this computer is no longer private: the redirect is
  // followed through the proxy, and no request the proxy carries has the token.
  const proxy = await startRecordingProxy();
  try {
    const proxied = await run(['params', '--model', 'hop/Qwen2.5-7B', '--json'],
      { HF_HOME: home('hop-proxy'), HF_TOKEN: GOOD_TOKEN, http_proxy: proxy.url });
    assert.equal(proxied.code, 0, proxied.all);
    assert.ok(proxy.requests.some((q) => q.url.includes('/hop/Qwen2.5-7B/')), 'the endpoint was reached through the proxy');
    assert.ok(proxy.requests.some((q) => q.url.startsWith(other.url)), 'so was the redirect\'s host');
    assert.ok(proxy.requests.every((q) => q.authorization === null), 'the proxy never saw the token');
  } finally {
    await proxy.close();
  }
});

test('each failure names the fix: 404 with the closest bundled ids, timeout, no config.json, not JSON, not a model config', async () => {
  const env = { HF_HOME: home('faults') };
  const cases = [
    [['estimate', '--model', 'missing/Qwen2.5-7b'], {}, /was not found on .* \(HTTP 404\): check the spelling.*similar name: Qwen\/Qwen2\.5-7B/],
    [['estimate', '--model', 'slow/model'], { HF_HUB_DOWNLOAD_TIMEOUT: '1' }, /did not answer within 1 s \(HF_HUB_DOWNLOAD_TIMEOUT, for all of this command's requests and redirects\).*HF_HUB_OFFLINE=1/],
    [['estimate', '--model', 'noconfig/model'], {}, /has no config\.json at revision main \(HTTP 404\): gpumem reads transformers model repositories/],
    [['estimate', '--model', 'html/model'], {}, /is not JSON .*is HF_ENDPOINT a Hub/],
    [['estimate', '--model', 'busy/model'], {}, /rate-limiting requests \(HTTP 429\): try again in 30 s/],
    [['estimate', '--model', 'down/model'], {}, /having trouble \(HTTP 503\)/],
    [['estimate', '--model', 'bad/model'], {}, /hidden_size|model_type/],
    [['estimate', '--model', 'mirror/Qwen2.5-7B'], { HF_ENDPOINT: 'http://127.0.0.1:9' }, /could not reach the Hub at http:\/\/127\.0\.0\.1:9 for mirror\/Qwen2\.5-7B \(.*\): check the connection/],
    [['estimate', '--model', 'mirror/Qwen2.5-7B'], { HF_ENDPOINT: 'ftp://example.org' }, /HF_ENDPOINT "ftp:\/\/example\.org" is not an http\(s\) address/],
  ];
  for (const [args, extra, message] of cases) {
    const started = Date.now();
    const r = await run(args, { ...env, ...extra });
    assert.equal(r.code, 1, `${args.join(' ')}: ${r.all}`);
    assert.match(r.stderr, message, args.join(' '));
    assert.ok(Date.now() - started < 15_000, `${args.join(' ')} answered in bounded time`);
  }
  // --json: the same message as an error document.
  const json = await run(['estimate', '--model', 'missing/model', '--json'], env);
  assert.match(JSON.parse(json.stdout).errors[0].message, /^model: missing\/model was not found/);
});

test('the Hub\'s safetensors count beside the exact one: a warning past 1 %', async () => {
  const env = { HF_HOME: home('count') };
  const exact = await run(['estimate', '--model', 'mirror/Qwen2.5-7B', '--json'], env);
  assert.ok(!JSON.parse(exact.stdout).warnings.some((w) => /safetensors/.test(w)), 'equal counts: no warning');
  const off = await run(['estimate', '--model', 'offby/Qwen2.5-7B', '--json'], env);
  assert.equal(off.code, 0, off.all);
  const warning = JSON.parse(off.stdout).warnings.find((w) => /safetensors/.test(w));
  // 7,615,616,512 x 1.05 = 7,996,397,338 (rounded): 5.0 % more than the exact count.
  assert.match(warning ?? '', /the Hub counts 7,996,397,338 parameters in offby\/Qwen2\.5-7B's safetensors, \+5\.0% from the exact count from config\.json \(7,615,616,512\)/);
});

test('a local config.json, or a folder holding one, is read before presets and the Hub', async () => {
  const folder = path.join(tmp, 'local-model');
  fs.mkdirSync(folder, { recursive: true });
  const record = JSON.parse(fs.readFileSync(path.join(repo, 'presets', 'models', 'Qwen__Qwen2.5-7B.json'), 'utf8'));
  fs.writeFileSync(path.join(folder, 'config.json'), JSON.stringify(record.config));
  const mark = hub.requests.length;
  for (const model of [folder, path.join(folder, 'config.json')]) {
    const r = await run(['params', '--model', model, '--json'], { HF_HOME: home('local') });
    assert.equal(r.code, 0, r.all);
    assert.equal(total(r), QWEN_7B);
  }
  assert.equal(hub.requests.length, mark, 'no request for a local model');
  const empty = await run(['params', '--model', tmp], { HF_HOME: home('local') });
  assert.equal(empty.code, 1);
  assert.match(empty.stderr, /has no config\.json/);
});
