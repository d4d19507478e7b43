#!/usr/bin/env node
// Minifies the site's scripts in place (issue #29: fewer bytes on the wire). The sources stay readable
// in web/ and the emscripten build; build/wasm/site gets the minified copies, and so does the offline
// bundle, which is assembled from that folder afterwards.
//
//   node web/minify.mjs FILE.js...
//
// terser (web/package.json, installed by .ci/bootstrap) compresses and renames local names only: the
// names each script shares with the others at the top level (createGpumemApp, gpumemHub, ...) and every
// property name are kept.

import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';

function fail(message) {
  console.error(`minify.mjs: ${message}`);
  process.exit(1);
}

const files = process.argv.slice(2);
if (files.length === 0) fail('usage: node web/minify.mjs FILE.js...');

let terser;
try {
  terser = createRequire(import.meta.url)('terser');
} catch {
  fail('terser is not installed in web/node_modules: run `bash .ci/bootstrap --site`');
}

for (const file of files) {
  const source = readFileSync(file, 'utf8');
  const result = await terser.minify(source, {
    compress: { passes: 2 },
    mangle: true,          // local names; top-level names and properties stay (toplevel is off)
    format: { comments: false },
  }).catch((error) => fail(`${file}: ${error.message}`));
  writeFileSync(file, result.code);
  console.log(`minify.mjs: ${file} ${source.length} -> ${result.code.length} bytes`);
}
