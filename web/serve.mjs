#!/usr/bin/env node
// A tiny static file server for the built site: no dependencies, for local use and tests.
//
//   node web/serve.mjs --root build/wasm/site [--port 8000] [--host 127.0.0.1]
//
// --port 0 picks a free port. Prints "gpumem: serving DIR at http://HOST:PORT/" once listening
// (tests read that line). Serves files under --root only, with the MIME types the page needs
// (application/wasm lets browsers compile while downloading), and no caching.
//
// Safety, for a server meant for this computer only:
//   - a file is served only when its real path (symbolic links resolved) is inside --root's real
//     path: a link in the folder that points elsewhere (/etc/passwd) is "forbidden";
//   - only requests whose Host header names a loopback address (127.0.0.0/8, [::1], localhost,
//     with any port) or the --host it listens on are answered: a web page that rebinds its own DNS
//     name to 127.0.0.1 (DNS rebinding) gets 421 and no file.

import { createReadStream, realpathSync } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
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
let root;
try {
  root = realpathSync(resolve(args.root));
} catch {
  console.error(`serve.mjs: --root ${args.root} does not exist`);
  process.exit(2);
}

const inside = (path) => path === root || path.startsWith(root + sep);

// The file a URL path names under root, or null when it would escape it (by name; links are
// checked once the file is found).
function fileFor(urlPath) {
  let path;
  try {
    path = decodeURIComponent(urlPath.split('?')[0].split('#')[0]);
  } catch {
    return null;
  }
  if (path.includes('\0')) return null;
  const file = normalize(join(root, path));
  return inside(file) ? file : null;
}

// The host name of a Host header ("127.0.0.1:8000", "[::1]:8000", "localhost"), lower case.
function hostName(header) {
  const value = String(header ?? '').trim().toLowerCase();
  if (value.startsWith('[')) return value.slice(0, value.indexOf(']') + 1);
  return value.replace(/:\d*$/, '');
}

// Loopback names, and the address the server was told to listen on.
function allowedHost(header) {
  const name = hostName(header);
  if (name === '') return false;
  if (name === 'localhost' || name.endsWith('.localhost') || name === '[::1]') return true;
  if (/^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name)) return true;
  const listen = args.host.includes(':') ? `[${args.host.toLowerCase()}]` : args.host.toLowerCase();
  return name === listen && listen !== '0.0.0.0' && listen !== '[::]';
}

const server = createServer(async (req, res) => {
  const send = (status, text) => {
    res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8' });
    res.end(text);
  };
  if (!allowedHost(req.headers.host)) return send(421, 'this server answers only to loopback host names\n');
  if (req.method !== 'GET' && req.method !== 'HEAD') return send(405, 'method not allowed\n');

  let file = fileFor(req.url);
  if (file === null) return send(403, 'forbidden\n');
  try {
    file = await realpath(file);
    let info = await stat(file);
    if (info.isDirectory()) {
      file = await realpath(join(file, 'index.html'));
      info = await stat(file);
    }
    if (!inside(file)) return send(403, 'forbidden\n');
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
