// `gpumem settings`: the core's settings tables, and docs/scenario.md generated from them.
//
//   node --test tests/cli/
//   GPUMEM_CLI=path/to/gpumem node --test tests/cli/     (default build/native/core/cli/gpumem)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..', '..');
const cli = path.resolve(repo, process.env.GPUMEM_CLI || 'build/native/core/cli/gpumem');

function gpumem(args) {
  const r = spawnSync(cli, args, { encoding: 'utf8' });
  assert.equal(r.status, 0, `gpumem ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return r.stdout;
}

test('docs/scenario.md is what `gpumem settings --markdown` generates', () => {
  const generated = gpumem(['settings', '--markdown']);
  const checkedIn = fs.readFileSync(path.join(repo, 'docs', 'scenario.md'), 'utf8');
  assert.ok(checkedIn === generated,
    'docs/scenario.md differs from the settings tables (core/include/gpumem/settings.h); regenerate it with\n' +
    '  build/native/core/cli/gpumem settings --markdown > docs/scenario.md');
});

test('settings --json lists every enumerated field with its default among its values', () => {
  const settings = JSON.parse(gpumem(['settings', '--json']));
  for (const field of ['mode', 'training.method', 'training.optimizer', 'training.quantization', 'inference.engine',
    'inference.kv_cache_dtype', 'inference.weight_format', 'engine.type', 'engine.fsdp_sharding', 'engine.offload_param']) {
    const f = settings[field];
    assert.ok(f, `no ${field}`);
    const names = f.values.map((v) => v.name);
    assert.ok(names.includes(f.default), `${field}: default ${f.default} not in ${names}`);
    for (const v of f.values) for (const key of ['name', 'label', 'help']) assert.equal(typeof v[key], 'string');
  }
  assert.ok(settings['training.quantization'].values.some((v) => v.name === 'fp4'));
});

test('every listed value and alias is accepted by validate, and the resolved scenario holds the name', () => {
  const settings = JSON.parse(gpumem(['settings', '--json']));
  const { values } = settings['training.optimizer'];
  for (const v of values) {
    for (const spelling of [v.name, ...v.aliases]) {
      const doc = { model: 'llama3-8b', training: { optimizer: spelling } };
      const r = spawnSync(cli, ['estimate', '--scenario', '-', '--json'], { input: JSON.stringify(doc), encoding: 'utf8' });
      assert.equal(r.status, 0, `${spelling}: ${r.stdout}${r.stderr}`);
      assert.equal(JSON.parse(r.stdout).scenario.training.optimizer, v.name);
    }
  }
});

test('the plain listing names each field once', () => {
  const lines = gpumem(['settings']).trim().split('\n');
  const fields = lines.map((l) => l.split(' ')[0]);
  assert.equal(new Set(fields).size, fields.length);
  assert.ok(fields.includes('training.optimizer'));
});
