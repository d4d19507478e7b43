// web/serve.mjs, the local server `./make.sh serve` runs: it serves only what is really inside its
// --root (a symbolic link out of the folder is refused) and answers only to loopback Host names
// (a page that rebinds its DNS name to 127.0.0.1 gets nothing). Plain node, no browser.
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import { startServer } from './harness.mjs';

let dir;
let server;
let port;

// GET `path` with the given Host header; resolves with { status, body, type } (type: Content-Type).
function get(path, host = `127.0.0.1:${port}`) {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: 'GET', headers: { Host: host } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => { body += chunk; });
      res.on('end', () => resolve({ status: res.statusCode, body, type: res.headers['content-type'] }));
    });
    req.on('error', reject);
    req.end();
  });
}

// Each type the page needs, as a browser must get it: application/wasm lets it compile while
// downloading (WebAssembly.instantiateStreaming refuses any other type); text with its charset.
const MIME_TYPES = {
  'file.html': 'text/html; charset=utf-8',
  'file.js': 'text/javascript; charset=utf-8',
  'file.mjs': 'text/javascript; charset=utf-8',
  'file.css': 'text/css; charset=utf-8',
  'file.json': 'application/json; charset=utf-8',
  'file.wasm': 'application/wasm',
  'file.png': 'image/png',
  'file.svg': 'image/svg+xml',
  'file.ico': 'image/x-icon',
  'file.txt': 'text/plain; charset=utf-8',
  'FILE.WASM': 'application/wasm',              // the extension is read without case
  'file.bin': 'application/octet-stream',       // any other: bytes, never sniffed as a page
};

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gpumem-serve-'));
  const root = join(dir, 'site');
  await mkdir(join(root, 'sub'), { recursive: true });
  await writeFile(join(root, 'index.html'), '<!doctype html><title>site</title>');
  await writeFile(join(root, 'sub', 'page.js'), 'console.log(1);');
  for (const name of Object.keys(MIME_TYPES)) await writeFile(join(root, name), name);
  await writeFile(join(dir, 'secret.txt'), 'outside the root');
  await symlink(join(dir, 'secret.txt'), join(root, 'leak.txt'));
  await symlink(dir, join(root, 'up'));                         // a link to the folder above
  await symlink(join(root, 'sub', 'page.js'), join(root, 'inner.js'));   // a link that stays inside
  let url;
  ({ child: server, url } = await startServer(root));
  port = Number(new URL(url).port);
});

after(async () => {
  server?.kill();
  if (dir) await rm(dir, { recursive: true, force: true });
});

test('files inside the root are served, with their MIME type', async () => {
  const index = await get('/');
  assert.deepEqual([index.status, index.type], [200, 'text/html; charset=utf-8'], 'the folder serves index.html');
  assert.equal((await get('/sub/page.js')).body, 'console.log(1);');
  assert.equal((await get('/inner.js')).status, 200, 'a link that stays inside is fine');
  for (const [name, type] of Object.entries(MIME_TYPES)) {
    const r = await get(`/${name}`);
    assert.deepEqual([r.status, r.type, r.body], [200, type, name], name);
  }
});

test('nothing outside the root: not by name, not through a symbolic link', async () => {
  for (const path of ['/leak.txt', '/up/secret.txt', '/up/', '/../secret.txt', '/%2e%2e/secret.txt',
    '/sub/..%2f..%2fsecret.txt', '/%00']) {
    const r = await get(path);
    assert.ok(r.status === 403 || r.status === 404, `${path}: ${r.status}`);
    assert.ok(!r.body.includes('outside the root'), `${path} leaked the file`);
  }
  assert.equal((await get('/leak.txt')).status, 403);
});

test('only loopback Host names are answered (DNS rebinding)', async () => {
  for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, 'LOCALHOST', `127.1.2.3:${port}`])
    assert.equal((await get('/', host)).status, 200, host);
  for (const host of ['evil.example', `evil.example:${port}`, '127.0.0.1.evil.example', `192.168.1.10:${port}`,
    'localhost.evil.example'])
    assert.equal((await get('/', host)).status, 421, `Host: ${host}`);
});
