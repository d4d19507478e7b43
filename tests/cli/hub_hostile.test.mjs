// `gpumem --model ID` against a hostile Hub mirror (tests/cli/hostile_hub.mjs) and through a proxy:
// what a crafted HF_ENDPOINT may not do (stall the command, take the token, write outside the HF
// cache, put escape sequences or forged lines on the terminal), and the revision rule. Runs the CLI
// as a subprocess with a throw-away HF_HOME and checks its exit, its stdout and stderr bytes, the
// requests each server received and the files on disk.
//
//   node --test tests/cli/hub_hostile.test.mjs
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';

import { GOOD_TOKEN, startMockHub } from '../browser/mock_hub.mjs';
import { PLAIN_TOTAL, startHostileHub, startRecordingProxy } from './hostile_hub.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..', '..');
const cli = path.resolve(repo, process.env.GPUMEM_CLI || 'build/native/core/cli/gpumem');

let hostile;
let hub;     // the well-behaved mock Hub (gated/* wants GOOD_TOKEN)
let proxy;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gpumem-hub-hostile-'));
const home = (name) => path.join(tmp, name);

before(async () => {
  hostile = await startHostileHub();
  hub = await startMockHub();
  proxy = await startRecordingProxy();
});
after(async () => {
  await hostile?.close();
  await hub?.close();
  await proxy?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

// Runs the CLI with no Hub or proxy variables but `env`; resolves with { code, stdout, stderr (Buffers
// as text, latin1: every byte kept), ms }.
function run(args, env = {}, timeoutMs = 60_000) {
  const clean = Object.fromEntries(Object.entries(process.env)
    .filter(([k]) => !/^(HF_|HUGGING)/.test(k) && !/^(https?|all|no)_proxy$/i.test(k)));
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const child = spawn(cli, args, { env: { ...clean, HF_ENDPOINT: hostile.url, ...env } });
    const out = [];
    const err = [];
    child.stdout.on('data', (d) => out.push(d));
    child.stderr.on('data', (d) => err.push(d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const stdout = Buffer.concat(out).toString('latin1');
      const stderr = Buffer.concat(err).toString('latin1');
      resolve({ code, signal, stdout, stderr, all: stdout + stderr, ms: Date.now() - started });
    });
  });
}

// Every file and link under `dir`, as relative paths (links with their targets).
function tree(dir) {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { recursive: true }).sort().map((p) => {
    const full = path.join(dir, p);
    const stat = fs.lstatSync(full);
    return stat.isSymbolicLink() ? `${p} -> ${fs.readlinkSync(full)}` : stat.isDirectory() ? `${p}/` : p;
  });
}

test('the /api/models answer is read for safetensors.total alone: huge (63 MiB), deep and wide answers cost seconds, not minutes', async () => {
  const env = { HF_HOME: home('api') };
  const plain = await run(['estimate', '--model', 'plain/gpt2', '--json'], env);
  assert.equal(plain.code, 0, plain.all);
  assert.ok(hostile.requests.some((r) => r.path === '/api/models/plain/gpt2?expand=safetensors'),
    'only the safetensors key is asked for, as HfApi.model_info(expand=...) asks');
  // The exact count from config.json is GPT-2's 124,439,808: equal to the Hub's, no warning.
  assert.ok(!JSON.parse(plain.stdout).warnings.some((w) => /safetensors/.test(w)), plain.stdout);

  const cases = [
    ['huge/gpt2', /safetensors count for huge\/gpt2 is not compared: its model info \(\/api\/models\) was larger than 1 MiB/],
    ['deep/gpt2', /safetensors count for deep\/gpt2 is not compared: its model info \(\/api\/models\) is nested deeper than 64 levels/],
  ];
  for (const [model, note] of cases) {
    const r = await run(['estimate', '--model', model, '--json'], env);
    assert.equal(r.code, 0, `${model}: ${r.all}`);
    assert.match(JSON.parse(r.stdout).warnings.join('\n'), note, model);
    assert.ok(r.ms < 20_000, `${model} answered in ${r.ms} ms`);
    console.log(`# ${model}: answered in ${r.ms} ms`);
  }
  // 20,000 keys (each holding a decoy safetensors.total; 0.7 MiB) before the real one: only the top level's is read.
  const wide = await run(['estimate', '--model', 'wide/gpt2', '--json'], { ...env, HF_HUB_DOWNLOAD_TIMEOUT: '30' });
  assert.equal(wide.code, 0, wide.all);
  assert.ok(!JSON.parse(wide.stdout).warnings.some((w) => /safetensors/.test(w)), 'the count read is the real one');
  console.log(`# wide/gpt2 (20,000 keys): answered in ${wide.ms} ms`);
  assert.equal(PLAIN_TOTAL, 124439808);
});

test('HF_HUB_DOWNLOAD_TIMEOUT bounds the whole command: slow redirects, endless redirects and a trickling answer', async () => {
  const env = { HF_HOME: home('time'), HF_HUB_DOWNLOAD_TIMEOUT: '1' };
  // Each hop takes 0.8 s: one deadline for all of them, so the second hop runs out of time.
  const slow = await run(['estimate', '--model', 'slowhop/gpt2'], env);
  assert.equal(slow.code, 1, slow.all);
  assert.match(slow.stderr, /did not answer within 1 s \(HF_HUB_DOWNLOAD_TIMEOUT, for all of this command's requests and redirects\)/);
  assert.ok(slow.ms < 10_000, `slow redirects stopped after ${slow.ms} ms`);
  console.log(`# slowhop with a 1 s timeout: ${slow.ms} ms`);
  // A body trickled one byte every 100 ms, forever.
  const trickle = await run(['estimate', '--model', 'trickle/gpt2'], env);
  assert.equal(trickle.code, 1, trickle.all);
  assert.match(trickle.stderr, /did not answer within 1 s/);
  assert.ok(trickle.ms < 10_000, `the trickle stopped after ${trickle.ms} ms`);
  // Instant redirects to itself: stopped after 5, the Location shown.
  const mark = hostile.requests.length;
  const loop = await run(['estimate', '--model', 'loop/gpt2'], { HF_HOME: home('time') });
  assert.equal(loop.code, 1, loop.all);
  assert.match(loop.stderr, /more than 5 redirects, the last to http:\/\/127\.0\.0\.1:\d+\/loop\/gpt2\/resolve\/main\/config\.json\?hop=6/);
  assert.equal(hostile.requests.slice(mark).filter((r) => r.path.startsWith('/loop/')).length, 6, 'the first request and 5 redirects');
  // A value that is not a whole number of seconds is named, and the default used.
  const bad = await run(['estimate', '--model', 'plain/gpt2', '--json'], { HF_HOME: home('time'), HF_HUB_DOWNLOAD_TIMEOUT: '2.5\u001b[2J' });
  assert.equal(bad.code, 0, bad.all);
  assert.ok(JSON.parse(bad.stdout).warnings.includes(
    'HF_HUB_DOWNLOAD_TIMEOUT "2.5\\x1b[2J" is not a whole number of seconds from 1 to 9999: 10 s used'), bad.stdout);
});

test('text from the Hub reaches the terminal on one line, escape sequences shown as text', async () => {
  const env = { HF_HOME: home('escape') };
  const noControls = (r, what) => {
    assert.ok(!/[\u0000-\u0008\u000b-\u001f\u007f]/.test(r.all.replace(/\r?\n/g, '')), `${what}: no control byte: ${JSON.stringify(r.all)}`);
    assert.ok(!/^NOTICE/m.test(r.all), `${what}: no forged line`);
    assert.ok(!r.all.includes('\u00e2\u0080\u00ae'), `${what}: no right-to-left override (UTF-8 bytes of U+202E)`);
  };
  // model_type and architectures[0]: the config's values in the table's heading and warnings.
  const config = await run(['estimate', '--model', 'escape/gpt2'], env);
  assert.equal(config.code, 0, config.all);
  noControls(config, 'model_type');
  assert.match(config.stdout, /model_type 'gpt2\\x1b\[2J\\x1b\[31mEVIL\\r\\nNOTICE: verified to fit\\u202e' is not a known family/);
  const table = await run(['table', 'escape/gpt2'], env);
  assert.equal(table.code, 0, table.all);
  noControls(table, 'table');
  // Retry-After and a redirect's Location.
  const busy = await run(['estimate', '--model', 'busy/gpt2'], env);
  assert.equal(busy.code, 1);
  noControls(busy, 'Retry-After');
  assert.match(busy.stderr, /try again in 30\\x1b\[2J\\x1b\[H s/);
  const hop = await run(['estimate', '--model', 'badhop/gpt2'], env);
  assert.equal(hop.code, 1);
  noControls(hop, 'Location');
  assert.match(hop.stderr, /a redirect pointed at ftp:\/\/evil\.example\/\\x1b\]0;pwned\\x07\\x1b\[2J/);
  // An id or revision with an escape sequence is refused, and shown escaped.
  const id = await run(['estimate', '--model', 'org/na\u001b[2Jme'], env);
  assert.equal(id.code, 1);
  noControls(id, 'the id');
  const rev = await run(['estimate', '--model', 'plain/gpt2', '--revision', 'ma\u001b[2Jin\nNOTICE: x'], env);
  assert.equal(rev.code, 1);
  noControls(rev, 'the revision');
  assert.match(rev.stderr, /--revision "ma\\x1b\[2Jin\\nNOTICE: x" is not a branch, tag or commit name/);
});

test('--revision is checked before it reaches the cache: "main/", "..", ".lock" and the like are refused, the cache untouched', async () => {
  const env = { HF_HOME: home('revision') };
  const first = await run(['params', '--model', 'plain/gpt2', '--json'], env);
  assert.equal(first.code, 0, first.all);
  const cache = path.join(home('revision'), 'hub');
  const before = tree(cache);
  const ref = path.join(cache, 'models--plain--gpt2', 'refs', 'main');
  assert.ok(fs.statSync(ref).isFile());
  const mark = hostile.requests.length;
  for (const bad of ['main/', '/main', 'a//b', 'a/../../../x', '.hidden', 'x/.y', 'v1.lock', 'v1.', '-rf', 'a b', 'a~1', 'x'.repeat(129)]) {
    for (const offline of [false, true]) {
      const r = await run(['params', '--model', 'plain/gpt2', '--revision', bad], { ...env, HF_HUB_OFFLINE: offline ? '1' : '' });
      assert.equal(r.code, 1, `${bad}: ${r.all}`);
      assert.match(r.stderr, /--revision ".*" is not a branch, tag or commit name: .*A revision has letters, digits/, bad);
    }
  }
  assert.equal(hostile.requests.length, mark, 'no request for a refused revision');
  assert.deepEqual(tree(cache), before, 'the cache is as it was');
  assert.ok(fs.statSync(ref).isFile(), 'refs/main is still a file');
  // Names git allows stay allowed: a tag with dots, a branch with '/', a pull request's ref.
  for (const good of ['v1.2.3', 'feature/x_y-z', 'refs/pr/1']) {
    const r = await run(['params', '--model', 'plain/gpt2', '--revision', good, '--json'], env);
    assert.equal(r.code, 0, `${good}: ${r.all}`);
    assert.ok(fs.statSync(path.join(cache, 'models--plain--gpt2', 'refs', ...good.split('/'))).isFile(), good);
  }
});

test('the HF cache is written as huggingface_hub writes it, from the Hub\'s own headers, and an offline run answers from it', async () => {
  const env = { HF_HOME: home('lfs') };
  // The config comes from the CDN at another origin; the commit and the blob's name from the Hub's 302.
  const online = await run(['params', '--model', 'lfs/gpt2', '--json'], env);
  assert.equal(online.code, 0, online.all);
  assert.ok(hostile.requests.some((r) => r.path === '/cdn/gpt2/config.json'), 'the CDN served it');
  const repoDir = path.join(home('lfs'), 'hub', 'models--lfs--gpt2');
  const commit = fs.readFileSync(path.join(repoDir, 'refs', 'main'), 'utf8');
  assert.match(commit, /^[0-9a-f]{40}$/);
  const link = fs.readlinkSync(path.join(repoDir, 'snapshots', commit, 'config.json'));
  assert.match(link, /^\.\.\/\.\.\/blobs\/[0-9a-f]{64}$/, 'the blob is named by X-Linked-Etag (sha256), not the CDN\'s ETag');
  assert.deepEqual(tree(repoDir).filter((p) => /incomplete|\.tmp/.test(p)), [], 'no temporary file left');
  const offline = await run(['params', '--model', 'lfs/gpt2', '--json'], { ...env, HF_HUB_OFFLINE: '1', HF_ENDPOINT: 'http://127.0.0.1:9' });
  assert.equal(offline.code, 0, offline.all);
  assert.match(offline.stderr, /from the HF cache/);
  assert.equal(JSON.parse(offline.stdout).total, PLAIN_TOTAL);
});

test('a hostile commit id or ETag cannot write outside the cache folder: the model loads, the cache is not written', async () => {
  const base = home('evil');
  const env = { HF_HUB_CACHE: path.join(base, 'a', 'b', 'c', 'hub') };
  const r = await run(['params', '--model', 'evilmeta/gpt2', '--json'], env);
  assert.equal(r.code, 0, r.all);
  assert.match(r.stderr + r.stdout, /HF cache not written/);
  // Only the cache folder (if anything) exists under the base: nothing named "outside" anywhere.
  assert.ok(!tree(base).some((p) => p.includes('outside')), tree(base).join('\n'));
  assert.ok(!fs.existsSync(path.join(env.HF_HUB_CACHE, 'models--evilmeta--gpt2', 'refs', 'main')));
  // Commands whose output has no warnings say it on stderr.
  const table = await run(['table', 'evilmeta/gpt2'], env);
  assert.equal(table.code, 0, table.all);
  assert.match(table.stderr, /^gpumem: note: HF cache not written: the Hub sent no commit id \(X-Repo-Commit\)/m);
});

test('the token and a proxy: plain http to this computer gets the token only when no proxy is in the path', async () => {
  const env = { HF_HOME: home('proxy'), HF_ENDPOINT: hub.url, HF_TOKEN: GOOD_TOKEN };
  const through = (mark) => proxy.requests.slice(mark);
  // http_proxy (curl's name for plain http) and ALL_PROXY: the proxy carries the request, without the token.
  for (const variable of ['http_proxy', 'ALL_PROXY', 'all_proxy']) {
    const mark = proxy.requests.length;
    const r = await run(['estimate', '--model', 'gated/llama'], { ...env, [variable]: proxy.url });
    assert.equal(r.code, 1, `${variable}: ${r.all}`);
    assert.ok(through(mark).length > 0, `${variable}: the request went through the proxy`);
    assert.ok(through(mark).every((q) => q.authorization === null), `${variable}: no token to the proxy`);
    assert.match(r.stderr, new RegExp(`the token from HF_TOKEN was not sent: HF_ENDPOINT is plain http through the proxy in ${variable}, which would read it`));
    assert.ok(!r.all.includes(GOOD_TOKEN) && !r.all.includes(proxy.url), 'neither the token nor the proxy\'s address is printed');
  }
  // NO_PROXY exempting the host (by name, by CIDR, or "*"): direct, with the token.
  for (const [name, exempt] of [['NO_PROXY', '127.0.0.1'], ['NO_PROXY', '127.0.0.0/8'], ['NO_PROXY', '*'],
    ['no_proxy', 'example.org, 127.0.0.1']]) {
    const mark = proxy.requests.length;
    const r = await run(['estimate', '--model', 'gated/llama', '--json'], { ...env, http_proxy: proxy.url, [name]: exempt });
    assert.equal(r.code, 0, `${name}=${exempt}: ${r.all}`);
    assert.equal(through(mark).length, 0, `${name}=${exempt}: the proxy saw nothing`);
  }
  // HTTP_PROXY in capitals is not curl's variable for http (it never was): direct, with the token.
  const mark = proxy.requests.length;
  const upper = await run(['estimate', '--model', 'gated/llama', '--json'], { ...env, HTTP_PROXY: proxy.url });
  assert.equal(upper.code, 0, upper.all);
  assert.equal(through(mark).length, 0);
  // A public model through the proxy still loads (the proxy is used, only the token is held back).
  const open = await run(['params', '--model', 'mirror/Qwen2.5-7B', '--json'], { ...env, HF_HOME: home('proxy-open'), http_proxy: proxy.url });
  assert.equal(open.code, 0, open.all);
  assert.ok(proxy.requests.some((q) => q.url.endsWith('/mirror/Qwen2.5-7B/resolve/main/config.json')));
});
