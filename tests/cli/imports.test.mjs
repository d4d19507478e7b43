// The CLI stage (node --test tests/cli/ tests/compat/) needs node and the gpumem binary, nothing
// npm installs: every file it runs, and every file those import, imports only node's own modules
// (node:*) and relative files. An import of playwright-core or any other package would make the
// stage fail on a machine where only tests/browser's npm install brings it.
//
//   node --test tests/cli/imports.test.mjs
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..', '..');

// Static and dynamic import specifiers of a module (comments are not code).
function specifiers(file) {
  const code = fs.readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  const out = [];
  for (const re of [/^\s*import\s[^'"]*?from\s*['"]([^'"]+)['"]/gm, /^\s*import\s*['"]([^'"]+)['"]/gm,
    /^\s*export\s[^'"]*?from\s*['"]([^'"]+)['"]/gm, /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g,
    /\brequire\(\s*['"]([^'"]+)['"]\s*\)/g]) {
    for (const m of code.matchAll(re)) out.push(m[1]);
  }
  return out;
}

// Every package a file reaches through its relative imports, as "importer: specifier".
function packagesReached(start) {
  const seen = new Set(), found = [];
  const visit = (file) => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const s of specifiers(file)) {
      if (s.startsWith('node:')) continue;
      if (s.startsWith('.')) visit(path.resolve(path.dirname(file), s));
      else found.push(`${path.relative(repo, file)}: ${s}`);
    }
  };
  visit(start);
  return found;
}

test('the specifier reader finds what a module imports', () => {
  const harness = path.join(repo, 'tests', 'browser', 'harness.mjs');
  assert.ok(specifiers(harness).includes('playwright-core'), 'the browser harness imports playwright-core');
  assert.ok(packagesReached(harness).some((p) => p.endsWith(': playwright-core')));
});

test('every CLI-stage test file loads with node alone (no npm package imported, directly or through a helper)', () => {
  const files = ['cli', 'compat'].flatMap((d) => fs.readdirSync(path.join(repo, 'tests', d))
    .filter((f) => f.endsWith('.mjs')).map((f) => path.join(repo, 'tests', d, f)));
  assert.ok(files.length >= 10, `${files.length} files`);
  const found = files.flatMap(packagesReached);
  assert.deepEqual([...new Set(found)], [], 'packages imported by the CLI stage');
});
