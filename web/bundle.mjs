#!/usr/bin/env node
// Builds the offline bundle: one self-contained HTML file that runs the whole page from file://
// with the network off. No dependencies.
//
//   node web/bundle.mjs --site build/wasm/site [--app DIR] [--out build/wasm/site/gpumem-offline.html]
//
// Reads the assembled site (index.html, page.css, page.js, hub.js) and the module in --app (its
// gpumem_app.js and gpumem_app.wasm; by default the site's: the build gives the offline page's own,
// which links the config readers and writers the served page fetches as gpumem_tools) and writes
// index.html with everything inside it:
//   - page.css in a <style>, gpumem_app.js and page.js in inline <script>s;
//   - the .wasm, gzip -9 then base64, in a data block <script id="gpumem-wasm"
//     type="application/octet-stream"> that is never executed: page.js decodes it and unpacks it
//     with the browser's DecompressionStream instead of fetching gpumem_app.wasm (base64 of the raw
//     .wasm would make the file 3.3 MB; compressed first it is 1.2 MB raw, 857 kB gzipped, about what
//     a server's gzip of the .wasm alone comes to). Zstandard (zstd -22, unpacked by a JavaScript
//     decoder) made the gzipped file 164 kB smaller but its first frame 43 ms later (unpacking 120
//     instead of 56 ms; issue #29): the bundle is downloaded once and opened many times;
//   - the served page's <link rel="preload"> of the .wasm is left out;
//   - the model presets and GPU catalogue are compiled into the .wasm, and Dear ImGui draws with
//     its embedded default font, so there is nothing else to fetch;
//   - the "Download for offline use" link is left out (the file is the offline copy);
//   - a Content-Security-Policy that allows no network request at all (connect-src, img-src,
//     font-src ... 'none'): nothing in the bundle can reach the network, and a later feature that
//     tries (a Hub fetch) gets an error it can report as "offline" instead of hanging.
// Each substitution must match exactly once; a changed index.html fails the build loudly.

import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';

function parseArgs(argv) {
  const args = { site: null, app: null, out: null };
  for (let i = 0; i < argv.length; i += 2) {
    const [key, value] = [argv[i], argv[i + 1]];
    if (key === '--site') args.site = value;
    else if (key === '--app') args.app = value;
    else if (key === '--out') args.out = value;
    else {
      console.error(`bundle.mjs: unknown argument ${key}\nusage: node web/bundle.mjs --site DIR [--app DIR] [--out FILE]`);
      process.exit(2);
    }
  }
  if (!args.site) {
    console.error('usage: node web/bundle.mjs --site DIR [--app DIR] [--out FILE]');
    process.exit(2);
  }
  args.site = resolve(args.site);
  args.app = resolve(args.app ?? args.site);
  args.out = resolve(args.out ?? join(args.site, 'gpumem-offline.html'));
  return args;
}

function fail(message) {
  console.error(`bundle.mjs: ${message}`);
  process.exit(1);
}

// Replaces the one occurrence of `pattern` in `html` (a string or a RegExp without /g).
function replaceOnce(html, pattern, replacement, what) {
  const source = typeof pattern === 'string' ? pattern : pattern.source;
  const flags = typeof pattern === 'string' ? 'g' : `${pattern.flags}g`;
  const escaped = typeof pattern === 'string' ? source.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') : source;
  const count = (html.match(new RegExp(escaped, flags)) ?? []).length;
  if (count !== 1) fail(`expected one ${what} in index.html, found ${count}`);
  return html.replace(pattern, () => replacement);   // a function: no $-patterns in replacement
}

// Text that goes inside <script> or <style> must not close the element early.
function inlineText(text, name, tag) {
  if (new RegExp(`</${tag}`, 'i').test(text)) fail(`${name} contains "</${tag}": it cannot be inlined`);
  if (/<!--/.test(text) && tag === 'script') fail(`${name} contains "<!--": it cannot be inlined`);
  return text;
}

const args = parseArgs(process.argv.slice(2));
const read = (name) => readFileSync(join(args.site, name));

const css = inlineText(read('page.css').toString('utf8'), 'page.css', 'style');
const readApp = (name) => readFileSync(join(args.app, name));
const appJs = inlineText(readApp('gpumem_app.js').toString('utf8'), 'gpumem_app.js', 'script');
const pageJs = inlineText(read('page.js').toString('utf8'), 'page.js', 'script');
const hubJs = inlineText(read('hub.js').toString('utf8'), 'hub.js', 'script');
const wasm = readApp('gpumem_app.wasm');

const csp = [
  "default-src 'none'",
  // Inline scripts; embind builds its invokers with new Function; WebAssembly compiles from bytes.
  "script-src 'unsafe-inline' 'unsafe-eval' 'wasm-unsafe-eval'",
  "style-src 'unsafe-inline'",
  'img-src data:',
].join('; ');

let html = read('index.html').toString('utf8');
// The served page's policy (scripts from its own site, the Hub in connect-src) gives way to this one.
html = replaceOnce(html, /<!--[^>]*-->\s*<meta http-equiv="Content-Security-Policy"[^>]*>/,
  `<meta http-equiv="Content-Security-Policy" content="${csp}">`, 'page CSP meta');
// The served page's preload of the .wasm: the bundle carries it inside.
html = replaceOnce(html, /[ \t]*<!--[^>]*-->\s*<link rel="preload" href="gpumem_app\.wasm"[^>]*>\n/, '',
  'wasm preload link');
html = replaceOnce(html, /<link rel="stylesheet" href="page\.css">/,
  `<style>\n${css}</style>`, 'page.css link');
html = replaceOnce(html, /[ \t]*(?:<!--[^>]*-->\s*)?<a id="offline-link"[^>]*>[^<]*<\/a>\n\n?/, '',
  'offline link');
html = replaceOnce(html, /<script src="gpumem_app\.js"><\/script>/,
  `<script id="gpumem-wasm" type="application/octet-stream">${gzipSync(wasm, { level: 9 }).toString('base64')}</script>\n` +
  `  <script>\n${appJs}\n</script>`, 'gpumem_app.js script');
html = replaceOnce(html, /<script src="hub\.js"><\/script>/,
  `<script>\n${hubJs}</script>`, 'hub.js script');
html = replaceOnce(html, /<script src="page\.js"><\/script>/,
  `<script>\n${pageJs}</script>`, 'page.js script');

// Whatever is left that names a URL would be a request from file://.
const leftover = html.match(/\s(?:src|href)="(?!data:|#)[^"]*"/g);
if (leftover) fail(`references left in the bundle: ${leftover.join(', ')}`);

writeFileSync(args.out, html);
console.log(`bundle.mjs: wrote ${args.out} (${(Buffer.byteLength(html) / 1024 / 1024).toFixed(2)} MiB)`);
