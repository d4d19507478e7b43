// The npm package "gpumem" (wasm/npm/, assembled by the npm_package target into build/wasm/npm):
// packed with `npm pack`, installed from the tarball into a scratch project with the network off,
// then used as a user would: import (ESM), require (CommonJS), and TypeScript against its types.
//
//   node --test tests/package/
//   env GPUMEM_NPM_DIR (default build/wasm/npm), GPUMEM_CLI (to compare figures with the CLI)
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const packageDir = path.resolve(process.env.GPUMEM_NPM_DIR ?? path.join(repo, 'build', 'wasm', 'npm'));
const cli = path.resolve(process.env.GPUMEM_CLI ?? path.join(repo, 'build', 'native', 'core', 'cli', 'gpumem'));
const tsc = path.join(repo, 'tests', 'browser', 'node_modules', 'typescript', 'bin', 'tsc');
const version = fs.readFileSync(path.join(repo, 'CMakeLists.txt'), 'utf8').match(/project\(gpumem VERSION ([0-9.]+)/)[1];

let scratch;
let tarball;

before(() => {
  assert.ok(fs.existsSync(path.join(packageDir, 'package.json')), `no package at ${packageDir}: build the npm_package target`);
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'gpumem-npm-'));
  const packed = execFileSync('npm', ['pack', packageDir, '--pack-destination', scratch, '--json', '--loglevel=error'],
    { encoding: 'utf8' });
  tarball = path.join(scratch, JSON.parse(packed)[0].filename);
  const project = path.join(scratch, 'project');
  fs.mkdirSync(project);
  fs.writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'scratch', private: true, type: 'module' }));
  execFileSync('npm', ['install', '--offline', '--no-audit', '--no-fund', '--loglevel=error', tarball], { cwd: project });
});

after(() => {
  if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
});

const project = () => path.join(scratch, 'project');
const node = (file, source) => {
  fs.writeFileSync(path.join(project(), file), source);
  return spawnSync(process.execPath, [file], { cwd: project(), encoding: 'utf8' });
};

test('the tarball holds the module, its ES entry, its types and a README, at the project\'s version', () => {
  assert.equal(path.basename(tarball), `gpumem-${version}.tgz`);
  const listed = execFileSync('tar', ['tzf', tarball], { encoding: 'utf8' }).trim().split('\n').sort();
  assert.deepEqual(listed, ['package/README.md', 'package/gpumem.cjs', 'package/index.d.ts', 'package/index.mjs',
    'package/package.json']);
});

test('import and require both give the fourteen functions; an estimate equals the CLI\'s', () => {
  const scenario = JSON.stringify({ model: { preset: 'meta-llama/Llama-3.1-8B' }, training: { method: 'lora', batch_size: 2 } });
  const esm = node('esm.mjs', `import createGpumem from 'gpumem';
const g = await createGpumem();
const r = JSON.parse(g.estimate(${JSON.stringify(scenario)}));
const bad = JSON.parse(g.estimate('{"model": {"preset": "llama3-8b"}, "training": {"batch_size": -4}}'));
console.log(JSON.stringify({ functions: Object.keys(g).filter((k) => ['estimate', 'params', 'presets', 'maxfit', 'plan', 'settings', 'fit', 'exportConfig', 'importDeepspeed', 'readConfigs', 'calibrate', 'sweep', 'sweepSvg', 'version'].includes(k) && typeof g[k] === 'function').sort(),
  settings: Object.keys(JSON.parse(g.settings())).length,
  total: r.per_gpu.device_total_bytes, version: g.version(), bad: bad.errors[0].field,
  models: JSON.parse(g.presets()).models.length, params: JSON.parse(g.params('{"model_type": "gpt2"}')).ok,
  maxfit: JSON.parse(g.maxfit(${JSON.stringify(scenario)})).ok }));
`);
  assert.equal(esm.status, 0, esm.stderr);
  const out = JSON.parse(esm.stdout);
  assert.deepEqual(out.functions, ['calibrate', 'estimate', 'exportConfig', 'fit', 'importDeepspeed', 'maxfit', 'params', 'plan', 'presets', 'readConfigs', 'settings', 'sweep', 'sweepSvg', 'version']);
  assert.ok(out.settings >= 20, 'settings() lists the enumerated fields');
  assert.equal(out.version, version);
  assert.equal(out.bad, 'training.batch_size', 'bad input is an error document, not a throw');
  assert.ok(out.models >= 80);
  assert.equal(out.maxfit, true);
  const cjs = node('cjs.cjs', `const createGpumem = require('gpumem');
createGpumem().then((g) => console.log(JSON.parse(g.estimate(${JSON.stringify(scenario)})).per_gpu.device_total_bytes));
`);
  assert.equal(cjs.status, 0, cjs.stderr);
  assert.equal(Number(cjs.stdout), out.total, 'require and import run the same module');
  if (fs.existsSync(cli)) {
    const fromCli = JSON.parse(execFileSync(cli, ['estimate', '--scenario', '-', '--json'], { input: scenario, encoding: 'utf8' }));
    assert.equal(out.total, fromCli.per_gpu.device_total_bytes, 'the package and the CLI agree to the byte');
  }
});

test('TypeScript checks a correct use against index.d.ts and rejects a wrong one', (t) => {
  if (!fs.existsSync(tsc)) return t.skip(`typescript is not installed at ${tsc} (bootstrap installs it with the browser tests' tools)`);
  const config = { compilerOptions: { strict: true, noEmit: true, module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022' } };
  fs.writeFileSync(path.join(project(), 'tsconfig.json'), JSON.stringify({ ...config, files: ['good.mts'] }));
  fs.writeFileSync(path.join(project(), 'good.mts'), `import createGpumem, { type GpumemModule, type GpumemErrorDocument } from 'gpumem';
const g: GpumemModule = await createGpumem();
const text: string = g.estimate(JSON.stringify({ model: { preset: 'llama3-8b' } }));
const parsed = JSON.parse(text) as { ok: true } | GpumemErrorDocument;
if (!parsed.ok) for (const e of parsed.errors) console.log(e.field, e.message);
const v: string = g.version();
console.log(v, g.params('{}'), g.presets(), g.maxfit(text), g.plan(text), g.settings());
`);
  const good = spawnSync(process.execPath, [tsc, '-p', project()], { cwd: project(), encoding: 'utf8' });
  assert.equal(good.status, 0, good.stdout + good.stderr);
  fs.writeFileSync(path.join(project(), 'tsconfig.json'), JSON.stringify({ ...config, files: ['bad.mts'] }));
  fs.writeFileSync(path.join(project(), 'bad.mts'), `import createGpumem from 'gpumem';
const g = await createGpumem();
const n: number = g.estimate({ model: 'x' });
g.frobnicate();
`);
  const bad = spawnSync(process.execPath, [tsc, '-p', project()], { cwd: project(), encoding: 'utf8' });
  assert.notEqual(bad.status, 0);
  assert.match(bad.stdout, /TS2345|TS2322/, 'an object where JSON text is expected');
  assert.match(bad.stdout, /TS2339: Property 'frobnicate' does not exist/);
});
