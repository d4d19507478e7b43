// Native vs WebAssembly parity: the same scenario must give the same bytes from the `gpumem` CLI
// and from the WebAssembly module the page uses. Every file in tests/data/scenarios (invalid ones
// too: their error documents must match as well) goes through `gpumem estimate --jsonl` in one
// subprocess and through `module.estimate()`; each pair of result strings must be identical.
//
//   node --test tests/parity/
//   GPUMEM_CLI=... GPUMEM_WASM=... node --test tests/parity/
//     (defaults build/native/core/cli/gpumem and build/wasm/wasm/gpumem.js)
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..', '..');
const cli = path.resolve(repo, process.env.GPUMEM_CLI || 'build/native/core/cli/gpumem');
const wasm = path.resolve(repo, process.env.GPUMEM_WASM || 'build/wasm/wasm/gpumem.js');
const scenarioDir = path.join(repo, 'tests', 'data', 'scenarios');
const hfConfig = path.join(repo, 'tests', 'cli', 'data', 'meta-llama-3-8b.config.json');
const MIN_COMPARED = 20;

for (const [what, file] of [['gpumem CLI', cli], ['WebAssembly module', wasm]]) {
  if (!fs.existsSync(file)) throw new Error(`${what} not found at ${file}: build it (./make.sh test) or set GPUMEM_CLI / GPUMEM_WASM`);
}

// One line per scenario file: valid JSON compacted, anything else (the malformed file) with its
// line breaks turned into spaces, so it stays one malformed line.
function scenarioLines() {
  return fs.readdirSync(scenarioDir).filter((f) => f.endsWith('.json')).sort().map((name) => {
    const text = fs.readFileSync(path.join(scenarioDir, name), 'utf8');
    let line;
    try {
      line = JSON.stringify(JSON.parse(text));
    } catch {
      line = text.replace(/\r?\n/g, ' ').trim();
    }
    return { name, line };
  });
}

function runCli(args, input) {
  const r = spawnSync(cli, args, { input, encoding: 'utf8', timeout: 120_000, maxBuffer: 256 << 20 });
  if (r.error) throw r.error;
  return r;
}

let m;
before(async () => {
  const factory = createRequire(import.meta.url)(wasm);
  m = await factory();
  for (const fn of ['estimate', 'params', 'presets', 'version']) {
    assert.equal(typeof m[fn], 'function', `the module exports ${fn}()`);
  }
});

test('every scenario: CLI --jsonl and WASM estimate() give byte-identical results', () => {
  const scenarios = scenarioLines();
  const r = runCli(['estimate', '--jsonl'], scenarios.map((s) => s.line).join('\n') + '\n');
  assert.equal(r.signal, null, `gpumem killed by ${r.signal}`);
  const anyInvalid = scenarios.some((s) => s.name.startsWith('invalid-'));
  assert.equal(r.status, anyInvalid ? 1 : 0, `gpumem estimate --jsonl exit code\n${r.stderr}`);
  const native = r.stdout.split('\n').filter((l) => l !== '');
  assert.equal(native.length, scenarios.length, 'one result line per scenario');

  const mismatches = [];
  let compared = 0;
  scenarios.forEach((s, i) => {
    const fromWasm = m.estimate(s.line);
    assert.equal(typeof fromWasm, 'string', `${s.name}: estimate() returns a string`);
    compared++;
    if (fromWasm !== native[i]) {
      let at = 0;
      while (at < fromWasm.length && fromWasm[at] === native[i][at]) at++;
      mismatches.push(`${s.name}: first difference at char ${at}:\n  native: …${native[i].slice(Math.max(0, at - 80), at + 80)}\n  wasm:   …${fromWasm.slice(Math.max(0, at - 80), at + 80)}`);
    }
  });
  assert.deepEqual(mismatches, [], `${mismatches.length} of ${compared} differ:\n${mismatches.join('\n')}`);
  assert.ok(compared >= MIN_COMPARED, `compared ${compared} scenarios, need at least ${MIN_COMPARED}`);
  // Each scenario answered as its name says: invalid-* refused, every other one estimated (two equal
  // error documents would otherwise pass as parity).
  const wrong = scenarios.filter((s, i) => JSON.parse(native[i]).ok !== !s.name.startsWith('invalid-'));
  assert.deepEqual(wrong.map((s) => s.name), [], 'scenarios whose ok is not what their name says');
  assert.ok(scenarios.filter((s) => !s.name.startsWith('invalid-')).length >= MIN_COMPARED, 'at least 20 valid scenarios');
  assert.ok(scenarios.some((s) => s.name.startsWith('invalid-')), 'at least one invalid scenario');
});

test('the explanation (\"explain\": true) is byte-identical too: every figure, its numbers and text', () => {
  // The valid scenarios with the output option on: formatting of the numbers ("8,030,261,248 params",
  // "14.96 GiB") must not depend on the C library (glibc natively, musl in the module).
  const scenarios = scenarioLines().filter((s) => !s.name.startsWith('invalid-')).map((s) => {
    const doc = JSON.parse(s.line);
    doc.explain = true;
    return { name: s.name, line: JSON.stringify(doc) };
  });
  const r = runCli(['estimate', '--jsonl'], scenarios.map((s) => s.line).join('\n') + '\n');
  const native = r.stdout.split('\n').filter((l) => l !== '');
  assert.equal(native.length, scenarios.length);
  let explained = 0;
  scenarios.forEach((s, i) => {
    const result = JSON.parse(native[i]);
    assert.equal(result.ok, true, `${s.name}: ${JSON.stringify(result.errors)}`);
    explained += result.explain ? 1 : 0;
    assert.equal(m.estimate(s.line), native[i], `${s.name}: native and WASM differ`);
  });
  assert.ok(explained >= MIN_COMPARED, `${explained} results carried an explanation`);
});

test('params: CLI --json and WASM params() agree on a config.json', () => {
  const text = fs.readFileSync(hfConfig, 'utf8');
  const r = runCli(['params', '--hf-config', hfConfig, '--json'], '');
  assert.equal(r.status, 0, r.stderr);
  const fromWasm = m.params(text);
  assert.deepEqual(JSON.parse(fromWasm), JSON.parse(r.stdout));
  assert.equal(JSON.parse(fromWasm).total, 8030261248);
});

test('presets and version agree', () => {
  const p = runCli(['presets', '--json'], '');
  assert.equal(p.status, 0, p.stderr);
  assert.deepEqual(JSON.parse(m.presets()), JSON.parse(p.stdout));
  const v = runCli(['version'], '');
  assert.equal(v.status, 0, v.stderr);
  assert.ok(v.stdout.includes(m.version()), `CLI version "${v.stdout.trim()}" includes module version "${m.version()}"`);
});

test('the module never throws on malformed input and answers with an error document', () => {
  const bad = [
    '', ' ', '{', '}', '[', 'null', 'true', '0', '-1', '"text"', '[]', '{}', '[1,2,3]',
    '{"model": null}', '{"model": []}', '{"model": {"preset": 7}}', '{"model": {"hf_config": "x"}}',
    '{"model": {"hf_config": {}}}', '{"model": {"preset": "llama3-8b"}, "training": "full"}',
    '{"model": {"preset": "llama3-8b"}, "training": {"batch_size": 1e300}}',
    '{"model": {"preset": "llama3-8b"}, "training": {"seq_len": -0.5}}',
    '{"model": {"preset": "llama3-8b"}, "parallelism": {"tensor_parallel_size": 0}}',
    '{"model": {"num_parameters": "lots"}}', '{"model": {"num_parameters": "-7B"}}',
    '{"model": {"preset": "llama3-8b"}}garbage', '\u0000', '\uFFFF\uD800', 'ÿþ{',
    '['.repeat(5000) + ']'.repeat(5000), '{"a":'.repeat(2000) + '1' + '}'.repeat(2000),
  ];
  for (const input of bad) {
    for (const fn of ['estimate', 'params']) {
      let out;
      assert.doesNotThrow(() => { out = m[fn](input); }, `${fn}(${JSON.stringify(input.slice(0, 40))}) threw`);
      assert.equal(typeof out, 'string', `${fn} returns a string`);
      let doc;
      assert.doesNotThrow(() => { doc = JSON.parse(out); }, `${fn} returns JSON: ${out.slice(0, 200)}`);
      if (doc.ok !== false) continue; // a few odd inputs may still be valid (e.g. a huge batch size)
      assert.ok(Array.isArray(doc.errors) && doc.errors.length > 0, `${fn}(${JSON.stringify(input.slice(0, 40))}): errors listed`);
    }
  }
  // And it still works afterwards.
  assert.equal(JSON.parse(m.estimate('{"model": {"preset": "llama3-8b"}}')).ok, true);
});

test('every saved fuzzer finding gets an answer from the module, with no escaped exception', () => {
  // tests/fuzz/regressions: inputs that once crashed or misled a native fuzz target. Scenario and
  // config ones go through the module's estimate / maxfit / params (read as Latin-1: embind hands the
  // module each byte as one UTF-8 character, so an invalid byte arrives as a valid but odd one).
  const dir = path.join(repo, 'tests', 'fuzz', 'regressions');
  const files = fs.readdirSync(dir).filter((f) => /^(scenario|config)-/.test(f));
  assert.ok(files.length >= 2, `regressions in ${dir}`);
  for (const f of files) {
    const bytes = fs.readFileSync(path.join(dir, f));
    for (const fn of ['estimate', 'maxfit', 'params']) {
      let out;
      assert.doesNotThrow(() => { out = m[fn](bytes.toString('latin1')); }, `${fn}(${f}) threw`);
      const doc = JSON.parse(out);
      assert.equal(typeof doc.ok, 'boolean', `${fn}(${f}) answers: ${out.slice(0, 200)}`);
      for (const e of doc.errors ?? []) assert.ok(!/^internal error/.test(e.problem), `${fn}(${f}): ${e.problem}`);
    }
  }
});

test('the same malformed inputs through the CLI give the same bytes', () => {
  const bad = ['{', 'null', '[]', '{}', '{"model": {"preset": 7}}', '{"model": {"preset": "llama3-8b"}}garbage'];
  const r = runCli(['estimate', '--jsonl'], bad.join('\n') + '\n');
  assert.equal(r.status, 1, r.stderr);
  const native = r.stdout.split('\n').filter((l) => l !== '');
  assert.equal(native.length, bad.length);
  bad.forEach((input, i) => assert.equal(m.estimate(input), native[i], `input ${JSON.stringify(input)}`));
});
