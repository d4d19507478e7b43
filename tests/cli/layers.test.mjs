// The core's layers read one way (docs/architecture.md, "The way through"): a file includes only
// headers of its own layer or of the layers below it (model -> scenario -> memory -> throughput ->
// search -> decisions -> the JSON API), and the front ends (the CLI, the WebAssembly bindings, the
// page) reach the core through gpumem.h alone, never through a core/src header. No CLI needed.
//
//   node --test tests/cli/layers.test.mjs
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const src = path.join(repo, 'core', 'src');

// Each core/src file's layer, lowest first. The foundation is what every layer reads values with
// (fields.h: issues, field readers, dtype names; tunables.h; the settings tables' code).
const foundation = new Set(['scenario/fields.h', 'scenario/fields.cpp', 'scenario/tunables.h', 'settings.cpp',
  'display_text.cpp']);
const ranks = { catalogue: 1, model: 2, scenario: 3, band: 3.5, memory: 4, throughput: 5, search: 6, export: 7, formats: 7,
  chart: 7, calibrate: 7, api: 8 };
// band/: the measured error of the memory model by class of run, a function of the scenario and a
// figure (the estimate's and fit's callers pass the point), so it sits just above the scenario.
// api/estimate.cpp lays the throughput into the memory model's document: estimate() is what the
// search scores with, so it sits with the throughput, below the search.
const fileRanks = { 'api/estimate.cpp': 5 };

function rankOf(rel) {
  if (foundation.has(rel)) return 0;
  if (rel in fileRanks) return fileRanks[rel];
  const dir = rel.split('/')[0];
  if (!(dir in ranks)) throw new Error(`${rel}: not in a known layer (add its folder to layers.test.mjs)`);
  return ranks[dir];
}

const sources = (dir) => fs.readdirSync(dir, { recursive: true }).map(String)
  .filter((f) => /\.(h|cpp)$/.test(f)).map((f) => f.split(path.sep).join('/'));
const includes = (file) => [...fs.readFileSync(file, 'utf8').matchAll(/^#include "([^"]+)"/gm)].map((m) => m[1]);

test('every core/src file includes only its own layer or the layers below it', () => {
  const up = [];
  for (const rel of sources(src)) {
    const mine = rankOf(rel);
    for (const inc of includes(path.join(src, rel))) {
      if (!fs.existsSync(path.join(src, inc))) continue;  // the public headers, generated files
      if (rankOf(inc) > mine) up.push(`core/src/${rel} includes "${inc}" (layer ${rankOf(inc)} above ${mine})`);
    }
  }
  assert.deepEqual(up, [], up.join('\n'));
});

test('the front ends reach the core through gpumem.h alone', () => {
  const inside = [];
  for (const dir of ['ui', 'wasm', 'core/cli']) {
    for (const rel of sources(path.join(repo, dir))) {
      if (rel.startsWith('npm/') || rel.includes('node_modules')) continue;
      for (const inc of includes(path.join(repo, dir, rel)))
        if (fs.existsSync(path.join(src, inc))) inside.push(`${dir}/${rel} includes core/src's "${inc}"`);
    }
  }
  assert.deepEqual(inside, [], inside.join('\n'));
});

test('the layer test knows a planted violation', () => {
  // The rule itself, on a made-up pair: the memory model including the search is upward.
  assert.ok(rankOf('search/search.h') > rankOf('memory/estimate.cpp'));
  assert.ok(rankOf('throughput/step_time.h') > rankOf('memory/memory.h'));
  assert.ok(rankOf('scenario/fields.h') < rankOf('model/model.h'));
});
