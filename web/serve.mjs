#!/usr/bin/env node
// A tiny static file server for the built site: no dependencies, for local use and tests.
//
//   node web/serve.mjs --root build/wasm/site [--port 8000] [--host 127.0.0.1]
//
// --port 0 picks a free port. Prints "gpumem: serving DIR at http://HOST:PORT/" once listening
// (tests read that line). Serves files under --root only, with the MIME types the page needs
// (application/wasm lets browsers compile while downloading), and no caching.

import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createServer } from 'node:http';
import { extname, join, normalize, resolve, sep } from 'node:path';

const MIME = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
};

function parseArgs(argv) {
  const args = { root: '.', port: 8000, host: '127.0.0.1' };
  for (let i = 0; i < argv.length; i++) {
    const key = argv[i];
    const value = argv[i + 1];
    if (key === '--root') args.root = value;
    else if (key === '--port') args.port = Number(value);
    else if (key === '--host') args.host = value;
    else if (key === '--help' || key === '-h') {
      console.log('usage: node web/serve.mjs --root DIR [--port 8000] [--host 127.0.0.1]');
      process.exit(0);
    } else {
      console.error(`serve.mjs: unknown argument ${key}`);
      process.exit(2);
    }
    i++;
  }
  if (!Number.isInteger(args.port) || args.port < 0 || args.port > 65535) {
    console.error(`serve.mjs: bad --port ${args.port}`);
    process.exit(2);
  }
  return args;
}

const args = parseArgs(process.argv.slice(2));
const root = resolve(args.root);

// The file a URL path names under root, or null when it would escape it.
function fileFor(urlPath) {
  let path;
  try {
    path = decodeURIComponent(urlPath.split('?')[0].split('#')[0]);
  } catch {
    return null;
  }
  const file = normalize(join(root, path));
  return file === root || file.startsWith(root + sep) ? file : null;
}

const server = createServer(async (req, res) => {
  const send = (status, text) => {
    res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8' });
    res.end(text);
  };
  if (req.method !== 'GET' && req.method !== 'HEAD') return send(405, 'method not allowed\n');

  let file = fileFor(req.url);
  if (file === null) return send(403, 'forbidden\n');
  try {
    let info = await stat(file);
    if (info.isDirectory()) {
      file = join(file, 'index.html');
      info = await stat(file);
    }
    res.writeHead(200, {
      'Content-Type': MIME[extname(file).toLowerCase()] ?? 'application/octet-stream',
      'Content-Length': info.size,
      'Cache-Control': 'no-cache',
    });
    if (req.method === 'HEAD') return res.end();
    createReadStream(file).pipe(res);
  } catch {
    send(404, 'not found\n');
  }
});

server.listen(args.port, args.host, () => {
  const { port } = server.address();
  const host = args.host.includes(':') ? `[${args.host}]` : args.host;
  console.log(`gpumem: serving ${root} at http://${host}:${port}/`);
});
