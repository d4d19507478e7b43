// The page's transfer size against its budget (issue #29): the gzip -9 size of every file a visit
// downloads (index.html and what it names: the stylesheet, the scripts, the preloaded .wasm), and of
// the offline bundle, and of the config tools the page fetches only when a user first imports a config or
// opens "Configs to run" (gpumem_tools.js + .wasm: ui/tools.h). Sizes are deterministic for a given build, so this is a plain test; the times
// (first frame, panels ready, frames while dragging) stay benchmark figures (tests/bench/page.mjs).
// The budgets are in tests/bench/page_budget.json: raise one only with the reason in the commit.
//
//   GPUMEM_SITE_DIR=build/wasm/site node --test tests/browser/size.test.mjs

import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { gzipSync } from 'node:zlib';

import { repo, siteDir } from './harness.mjs';

const budget = JSON.parse(readFileSync(join(repo, 'tests', 'bench', 'page_budget.json'), 'utf8'));
const gzipSize = (file) => gzipSync(readFileSync(file), { level: 9 }).length;
const kB = (bytes) => `${(bytes / 1000).toFixed(1)} kB`;

// The site's files that index.html names (src= and href=, relative, not data: or the offline link's
// target, which only a click downloads), and index.html itself.
function pageFiles() {
  const html = readFileSync(join(siteDir, 'index.html'), 'utf8');
  const named = [...html.matchAll(/\s(?:src|href)="([^"#?:]+)"/g)].map((m) => m[1]);
  return ['index.html', ...new Set(named.filter((f) => f !== 'gpumem-offline.html'))];
}

test('the page downloads within its budget (gzip -9)', () => {
  assert.ok(existsSync(join(siteDir, 'index.html')), `no site at ${siteDir} (GPUMEM_SITE_DIR)`);
  const files = pageFiles();
  for (const f of ['gpumem_app.js', 'gpumem_app.wasm', 'page.js', 'page.css'])
    assert.ok(files.includes(f), `index.html names ${f} (it names ${files.join(', ')})`);
  const sizes = files.map((f) => [f, gzipSize(join(siteDir, f))]);
  const total = sizes.reduce((s, [, n]) => s + n, 0);
  const detail = sizes.map(([f, n]) => `${f} ${kB(n)}`).join(', ');
  assert.ok(total <= budget.page_gzip_bytes,
    `the page is ${kB(total)} gzip, over its budget of ${kB(budget.page_gzip_bytes)}: ${detail}`);
});

test('the offline bundle is within its budget (gzip -9)', () => {
  const file = join(siteDir, 'gpumem-offline.html');
  assert.ok(existsSync(file), `no offline bundle at ${file}`);
  const size = gzipSize(file);
  assert.ok(size <= budget.bundle_gzip_bytes,
    `the offline bundle is ${kB(size)} gzip, over its budget of ${kB(budget.bundle_gzip_bytes)}`);
});

test('the config tools are fetched on demand, not with the page, and within their budget (gzip -9)', () => {
  const files = pageFiles();
  for (const f of ['gpumem_tools.js', 'gpumem_tools.wasm']) {
    assert.ok(existsSync(join(siteDir, f)), `the site has ${f}`);
    assert.ok(!files.includes(f), `index.html does not name ${f}: page.js fetches it when first needed`);
  }
  const size = gzipSize(join(siteDir, 'gpumem_tools.js')) + gzipSize(join(siteDir, 'gpumem_tools.wasm'));
  assert.ok(size <= budget.tools_gzip_bytes,
    `the config tools are ${kB(size)} gzip, over their budget of ${kB(budget.tools_gzip_bytes)}`);
});
