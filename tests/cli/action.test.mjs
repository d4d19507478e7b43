// The GitHub Action .github/actions/check without GitHub: its check step (check.sh) and its verdict
// (summary.mjs) run here as the runner runs them, on canned `gpumem check --json` outputs
// (tests/data/action/: real `gpumem estimate --json` results with a `check` block added as the check
// command documents it), through a stand-in CLI that answers each file with one of them. The table
// must carry each config's figures and the job must fail exactly when a config does not fit (exit 3),
// is invalid (1) or nothing was checked. When the CLI under test has `gpumem check`, the action also
// runs end to end on real configs from tests/data/realconfigs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const action = join(root, '.github/actions/check');
const cli = process.env.GPUMEM_CLI || join(root, 'build/native/core/cli/gpumem');
const canned = (name) => readFileSync(join(root, 'tests/data/action', `${name}.json`), 'utf8');
const GiB = 2 ** 30;

// A results folder as check.sh leaves it: i.file, i.code, i.json, i.err.
function resultsDir(rows) {
  const dir = mkdtempSync(join(tmpdir(), 'gpumem-action-'));
  rows.forEach((r, k) => {
    const i = k + 1;
    writeFileSync(join(dir, `${i}.file`), r.file);
    if (r.code !== undefined) writeFileSync(join(dir, `${i}.code`), `${r.code}\n`);
    writeFileSync(join(dir, `${i}.json`), r.json ?? '');
    writeFileSync(join(dir, `${i}.err`), r.err ?? '');
  });
  return dir;
}

function summary(dir) {
  const md = join(mkdtempSync(join(tmpdir(), 'gpumem-summary-')), 'summary.md');
  const r = spawnSync('node', [join(action, 'summary.mjs'), dir, '--summary', md], { encoding: 'utf8' });
  let table = '';
  try { table = readFileSync(md, 'utf8'); } catch { /* not written */ }
  return { code: r.status, out: r.stdout, err: r.stderr, md: table };
}

// The Markdown table's body rows as arrays of cells.
function cells(md) {
  return md.split('\n').filter((l) => l.startsWith('| ') && !l.startsWith('| File')).map((l) =>
    l.slice(2, -2).split(' | '));
}

const gib = (b) => `${(b / GiB).toFixed(1)} GiB`;

test('the verdict table: each config\'s format, model, GPUs, peak, capacity, headroom and verdict; one config ' +
  'that does not fit or is invalid fails the job', () => {
  const fits = JSON.parse(canned('fits')), big = JSON.parse(canned('does_not_fit'));
  const r = summary(resultsDir([
    { file: 'configs/qwen-lora.yml', code: 0, json: canned('fits') },
    { file: 'configs/70B_full.yaml', code: 3, json: canned('does_not_fit') },
    { file: 'configs/broken.yml', code: 1, json: canned('invalid'), err: 'error: training.batch_size: ...\n' },
  ]));
  assert.equal(r.code, 1, r.err);
  assert.match(r.md, /^### gpumem check: 2 of 3 configs failed$/m);
  assert.match(r.md, /^\| File \| Format \| Model \| GPUs \| Peak per GPU \| Capacity \| Headroom \| Verdict \|$/m);
  const [a, b, c] = cells(r.md);
  const fitsPeak = fits.per_gpu.device_total_bytes, cap = fits.per_gpu.capacity_bytes;
  assert.deepEqual(a, ['configs/qwen-lora.yml', 'axolotl', 'Qwen/Qwen2.5-0.5B', 'H100-80GB', gib(fitsPeak), gib(cap),
    `${gib(cap - fitsPeak)} (${(((cap - fitsPeak) / cap) * 100).toFixed(0)} %)`, ':white_check_mark: fits']);
  const bigPeak = big.per_gpu.device_total_bytes;
  assert.ok(bigPeak > cap);
  assert.deepEqual(b, ['configs/70B_full.yaml', 'torchtune', 'meta-llama/Llama-3.1-70B-Instruct', 'H100-80GB',
    gib(bigPeak), gib(cap), `-${gib(bigPeak - cap)} (${(((cap - bigPeak) / cap) * 100).toFixed(0)} %)`,
    ':x: does not fit']);
  // An invalid config: no figures, the first error's message as the reason.
  assert.deepEqual(c.slice(0, 7), ['configs/broken.yml', '', '', '', '', '', '']);
  assert.equal(c[7], `:x: invalid: ${JSON.parse(canned('invalid')).errors[0].message}`);
  // The log gets the same table as text and says which configs failed.
  assert.match(r.out, /^configs\/70B_full\.yaml +torchtune +meta-llama\/Llama-3\.1-70B-Instruct/m);
  assert.match(r.err, /configs\/70B_full\.yaml: does not fit/);
  assert.match(r.err, /configs\/broken\.yml: invalid: training\.batch_size/);
});

test('every config fits: the job passes', () => {
  const r = summary(resultsDir([
    { file: 'a.yml', code: 0, json: canned('fits') },
    { file: 'b.json', code: 0, json: canned('fits') },
  ]));
  assert.equal(r.code, 0, r.err);
  assert.match(r.md, /^### gpumem check: all 2 configs fit$/m);
  assert.equal(cells(r.md).length, 2);
});

test('what is not a verdict fails the job: nothing checked, a usage error, no exit code, a fit without a ' +
  'result, an exit 0 whose result says it does not fit', () => {
  let r = summary(resultsDir([]));
  assert.equal(r.code, 1);
  assert.match(r.md, /no config was checked/);
  r = summary(resultsDir([{ file: 'x.yml', code: 2, err: 'gpumem: unknown option --gpuz\n' }]));
  assert.equal(r.code, 1);
  assert.equal(cells(r.md)[0][7], ':x: usage error: gpumem: unknown option --gpuz');
  r = summary(resultsDir([{ file: 'x.yml' }]));
  assert.equal(r.code, 1);
  assert.match(cells(r.md)[0][7], /did not run/);
  r = summary(resultsDir([{ file: 'x.yml', code: 0, json: '{"ok": tru' }]));
  assert.equal(r.code, 1);
  assert.match(cells(r.md)[0][7], /exit 0 without a result/);
  const lying = JSON.parse(canned('does_not_fit'));
  r = summary(resultsDir([{ file: 'x.yml', code: 0, json: JSON.stringify(lying) }]));
  assert.equal(r.code, 1);
  assert.match(cells(r.md)[0][7], /says it does not fit/);
  // A file name with a | stays one cell.
  r = summary(resultsDir([{ file: 'a|b.yml', code: 0, json: canned('fits') }]));
  assert.equal(r.code, 0);
  assert.equal(cells(r.md)[0][0], 'a\\|b.yml');
});

// A stand-in for gpumem: answers `check FILE ... --json` with the canned output its file's name picks
// (fits*, big*, bad*), and records each command line.
function fakeCli(dir) {
  const path = join(dir, 'gpumem');
  writeFileSync(path, `#!/usr/bin/env node
const fs = require('node:fs'), path = require('node:path');
const argv = process.argv.slice(2);
fs.appendFileSync(${JSON.stringify(join(dir, 'calls.log'))}, JSON.stringify(argv) + '\\n');
const name = path.basename(argv[1] || '');
const pick = name.startsWith('fits') ? ['fits', 0] : name.startsWith('big') ? ['does_not_fit', 3] : ['invalid', 1];
process.stdout.write(fs.readFileSync(path.join(${JSON.stringify(join(root, 'tests/data/action'))}, pick[0] + '.json')));
if (pick[1] === 1) process.stderr.write('error: training.batch_size: must be an integer from 1 to 1000000, got 0\\n');
process.exit(pick[1]);
`);
  chmodSync(path, 0o755);
  return path;
}

function checkStep(cwd, gpumem, env, out = cwd) {
  const results = join(out, 'results');
  const md = join(out, 'summary.md');
  const e = { ...process.env, GITHUB_STEP_SUMMARY: md, ...env };
  const c = spawnSync('bash', [join(action, 'check.sh'), gpumem, results], { cwd, env: e, encoding: 'utf8' });
  let s = null;
  if (c.status === 0) {
    s = spawnSync('node', [join(action, 'summary.mjs'), results], { cwd, env: e, encoding: 'utf8' });
  }
  let table = '';
  try { table = readFileSync(md, 'utf8'); } catch { /* not written */ }
  return { check: c, summary: s, md: table };
}

test('check.sh: globs across folders, each file once, the action\'s inputs passed to every call; the verdict ' +
  'fails on the config that does not fit', () => {
  const work = mkdtempSync(join(tmpdir(), 'gpumem-action-run-'));
  const gpumem = fakeCli(work);
  mkdirSync(join(work, 'configs/train/deep'), { recursive: true });
  for (const f of ['configs/train/fits-a.yml', 'configs/train/deep/fits-b.yml', 'configs/train/big-c.yml',
    'configs/serve.sh', 'configs/notes.txt']) writeFileSync(join(work, f), 'x\n');
  const r = checkStep(work, gpumem, {
    INPUT_FILES: 'configs/**/*.yml\n  configs/serve.sh configs/train/fits-a.yml\n',
    INPUT_GPU: 'A100-80GB', INPUT_NUM_GPUS: '8', INPUT_GPUS_PER_NODE: '', INPUT_MODEL: 'Qwen/Qwen2.5-0.5B',
    INPUT_ARGS: '--seq-len 4096',
  });
  assert.equal(r.check.status, 0, r.check.stderr);
  const calls = readFileSync(join(work, 'calls.log'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  assert.deepEqual(calls.map((c) => c[1]).sort(),
    ['configs/serve.sh', 'configs/train/big-c.yml', 'configs/train/deep/fits-b.yml', 'configs/train/fits-a.yml']);
  for (const c of calls) {
    assert.deepEqual([c[0], ...c.slice(2)],
      ['check', '--gpu', 'A100-80GB', '--num-gpus', '8', '--model', 'Qwen/Qwen2.5-0.5B', '--seq-len', '4096',
        '--json']);
  }
  assert.equal(r.summary.status, 1);
  const rows = cells(r.md);
  assert.equal(rows.length, 4);
  assert.deepEqual(rows.filter((x) => x[7] === ':x: does not fit').map((x) => x[0]), ['configs/train/big-c.yml']);
  assert.deepEqual(rows.filter((x) => x[7].startsWith(':x: invalid')).map((x) => x[0]), ['configs/serve.sh']);
  assert.equal(rows.filter((x) => x[7] === ':white_check_mark: fits').length, 2);
});

test('check.sh: a glob that matches no file, or only folders, or an empty files input fails before anything runs',
  () => {
    const work = mkdtempSync(join(tmpdir(), 'gpumem-action-none-'));
    const gpumem = fakeCli(work);
    mkdirSync(join(work, 'configs'), { recursive: true });
    writeFileSync(join(work, 'configs/fits.yml'), 'x\n');
    for (const files of ['configs/*.yml configs/*.yaml', 'configs', '  \n ']) {
      const r = checkStep(work, gpumem, { INPUT_FILES: files });
      assert.equal(r.check.status, 1, files);
      assert.match(r.check.stderr, /no file matches|matches no regular file|files input is empty/);
    }
    assert.throws(() => readFileSync(join(work, 'calls.log')));
    assert.match(readFileSync(join(work, 'summary.md'), 'utf8'), /matched no file/);
  });

// End to end with the real CLI, once it has `gpumem check`.
const hasCheck = spawnSync(cli, ['check', '--help'], { encoding: 'utf8' }).status === 0;
const skip = hasCheck ? false : 'gpumem check is not in this CLI yet';
test('the action end to end with the real gpumem on real configs', { skip },
  () => {
    const work = mkdtempSync(join(tmpdir(), 'gpumem-action-real-'));
    const r = checkStep(join(root, 'tests/data/realconfigs'), cli, {
      INPUT_FILES: 'litgpt/config_hub/finetune/phi-2/full.yaml axolotl/examples/mistral/qlora.yml',
      INPUT_GPU: 'H100-80GB',
    }, work);
    assert.equal(r.check.status, 0, r.check.stderr);
    const rows = cells(r.md);
    assert.deepEqual(rows.map((x) => [x[0], x[1]]),
      [['litgpt/config_hub/finetune/phi-2/full.yaml', 'litgpt'], ['axolotl/examples/mistral/qlora.yml', 'axolotl']]);
    for (const x of rows) assert.match(x[7], /fits|does not fit/);
    assert.equal(r.summary.status, rows.every((x) => x[7].endsWith(' fits')) ? 0 : 1);
  });

// action.yml's own check step (its run script, its env taken from the inputs as the runner maps them),
// run by bash as the runner runs a composite step: the step fails, and its outputs say so.
test('action.yml: the check step\'s script with the runner\'s environment; outputs passed and results', () => {
  const r = spawnSync('python3', ['-c', 'import sys, json, yaml; print(json.dumps(yaml.safe_load(sys.stdin.read())))'],
    { input: readFileSync(join(action, 'action.yml'), 'utf8'), encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const spec = JSON.parse(r.stdout);
  assert.equal(spec.runs.using, 'composite');
  assert.deepEqual(Object.keys(spec.inputs).sort(), ['args', 'build-from-source', 'files', 'gpu', 'gpus-per-node',
    'model', 'num-gpus', 'repository', 'version']);
  assert.equal(spec.inputs.files.required, true);
  assert.equal(spec.inputs['build-from-source'].default, 'true');
  const step = spec.runs.steps.find((s) => s.id === 'check');
  const work = mkdtempSync(join(tmpdir(), 'gpumem-action-step-'));
  const gpumem = fakeCli(work);
  writeFileSync(join(work, 'fits.yml'), 'x\n');
  writeFileSync(join(work, 'big.yml'), 'x\n');
  const inputs = { files: 'fits.yml big.yml', gpu: 'H100-80GB', 'num-gpus': '', 'gpus-per-node': '', model: '', args: '' };
  const env = { ...process.env, RUNNER_TEMP: join(work, 'tmp'), GITHUB_ACTION_PATH: action,
    GITHUB_OUTPUT: join(work, 'output'), GITHUB_STEP_SUMMARY: join(work, 'summary.md') };
  for (const [k, v] of Object.entries(step.env)) {
    const m = /^\$\{\{ (inputs\.([\w-]+)|steps\.install\.outputs\.cli) \}\}$/.exec(v);
    assert.ok(m, `${k}: ${v}`);
    env[k] = m[2] !== undefined ? inputs[m[2]] : gpumem;
  }
  // GitHub runs a composite step's bash as: bash --noprofile --norc -eo pipefail FILE.
  const run = spawnSync('bash', ['--noprofile', '--norc', '-eo', 'pipefail', '-c', step.run],
    { cwd: work, env, encoding: 'utf8' });
  assert.equal(run.status, 1, run.stderr);
  const output = readFileSync(join(work, 'output'), 'utf8');
  assert.match(output, /^passed=false$/m);
  const results = /^results=(.*)$/m.exec(output)[1];
  assert.equal(readFileSync(join(results, '2.code'), 'utf8').trim(), '3');
  assert.deepEqual(cells(readFileSync(join(work, 'summary.md'), 'utf8')).map((x) => [x[0], x[7]]),
    [['fits.yml', ':white_check_mark: fits'], ['big.yml', ':x: does not fit']]);
});
