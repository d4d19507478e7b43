// tests/data/realconfigs: config files and launch commands as the tools' own repositories publish
// them (README.md there). First the manifest itself: every file listed and present, its source named
// (repository, path, 40-hex commit, licence), its expected fields spelled as scenario fields with values
// the scenario accepts (`gpumem settings --json`), the references between files resolving as in their
// projects, and the spread issue #25 asks for. Then, where the CLI has `gpumem check`, each standalone
// file is read: exit 0 (fits) or 3 (does not fit), and every expected field in the resolved scenario.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const dir = join(root, 'tests/data/realconfigs');
const cli = process.env.GPUMEM_CLI || join(root, 'build/native/core/cli/gpumem');
const sources = JSON.parse(readFileSync(join(dir, 'SOURCES.json'), 'utf8'));

const TOOLS = ['axolotl', 'torchtune', 'deepspeed', 'accelerate', 'litgpt', 'torchrun', 'vllm', 'sglang', 'llama.cpp',
  'tgi', 'tensorrt_llm'];
const SERVING = ['vllm', 'sglang', 'llama.cpp', 'tgi', 'tensorrt_llm'];
const LICENCES = ['Apache-2.0', 'MIT', 'BSD-3-Clause'];
// Scenario fields that are not enumerations (docs/scenario.md lists those), with the type they take.
const PLAIN = {
  'training.batch_size': 'int', 'training.gradient_accumulation_steps': 'int', 'training.seq_len': 'int',
  'training.lora.rank': 'int', 'training.activation_offloading': 'bool', 'training.optimizer_in_backward': 'bool',
  'engine.zero_stage': 'int', 'hardware.num_gpus': 'int', 'hardware.gpus_per_node': 'int',
  'parallelism.tensor_parallel_size': 'int', 'parallelism.pipeline_parallel_size': 'int',
  'parallelism.data_parallel_size': 'int', 'parallelism.context_parallel_size': 'int',
  'parallelism.expert_parallel_size': 'int', 'inference.context_len': 'int', 'inference.batch_size': 'int',
  'inference.gpu_memory_utilization': 'fraction', 'inference.mem_fraction_static': 'fraction',
  'inference.free_gpu_memory_fraction': 'fraction', 'inference.chunked_prefill_size': 'int',
  'inference.max_total_tokens': 'int', 'inference.max_batch_prefill_tokens': 'int', 'inference.max_num_tokens': 'int',
  'inference.max_num_batched_tokens': 'int', 'mode': ['training', 'inference'],
};

function settings() {
  const r = spawnSync(cli, ['settings', '--json'], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}

function listed(folder) {  // every file under folder, relative to dir
  return readdirSync(folder).flatMap((n) => {
    const p = join(folder, n);
    return statSync(p).isDirectory() ? listed(p) : [relative(dir, p)];
  });
}

test('SOURCES.json lists every file, sorted, each with its source, licence and expected fields', () => {
  const files = sources.map((e) => e.file);
  assert.deepEqual(files, [...files].sort(), 'sorted by file');
  assert.equal(new Set(files).size, files.length, 'each file once');
  assert.deepEqual(listed(dir).filter((f) => f !== 'README.md' && f !== 'SOURCES.json').sort(), [...files].sort());
  for (const e of sources) {
    const at = e.file;
    assert.deepEqual(Object.keys(e).filter((k) => !['file', 'tool', 'repo', 'path', 'commit', 'licence', 'model',
      'expect', 'note', 'lines', 'check_args', 'standalone'].includes(k)), [], at);
    assert.ok(TOOLS.includes(e.tool), `${at}: tool ${e.tool}`);
    assert.match(e.repo, /^[\w.-]+\/[\w.-]+$/, at);
    assert.match(e.commit, /^[0-9a-f]{40}$/, at);
    assert.ok(LICENCES.includes(e.licence), `${at}: licence ${e.licence}`);
    assert.ok(e.model === null || /^[\w.-]+(\/[\w.-]+)?$/.test(e.model), `${at}: model ${e.model}`);
    assert.ok(typeof e.note === 'string' && e.note.length > 10, `${at}: a note`);
    assert.ok(e.file.startsWith(e.file.split('/')[0] + '/'), at);
    // A whole file sits at its source path; a quoted command names its document's path.
    if (e.lines === undefined && !e.file.endsWith('.sh') && e.standalone !== false) {
      assert.ok(e.file.endsWith('/' + e.path), `${at}: kept at its path in the repository (${e.path})`);
    } else {
      assert.ok(e.file.includes('/' + e.path), `${at}: named after ${e.path}`);
    }
    if (e.lines !== undefined) assert.match(e.lines, /^\d+-\d+$/, at);
    if (e.check_args !== undefined) assert.ok(Array.isArray(e.check_args) && e.check_args.length % 2 === 0, at);
  }
});

test('every expected value is a scenario field with a value the scenario accepts', () => {
  const enums = settings();
  for (const e of sources) {
    for (const [k, v] of Object.entries(e.expect)) {
      const at = `${e.file}: ${k}`;
      if (k === 'training.lora.target_modules') {
        const names = enums[k].values.map((x) => x.name);
        assert.ok(Array.isArray(v) && v.length > 0 && v.every((m) => names.includes(m)), `${at}: ${v}`);
      } else if (enums[k]) {
        assert.ok(enums[k].values.some((x) => x.name === v), `${at}: ${v} is not one of the values`);
      } else {
        const type = PLAIN[k];
        assert.ok(type !== undefined, `${at}: not a scenario field this manifest knows`);
        if (Array.isArray(type)) assert.ok(type.includes(v), `${at}: ${v}`);
        else if (type === 'int') assert.ok(Number.isInteger(v) && v >= 0, `${at}: ${v}`);
        else if (type === 'bool') assert.equal(typeof v, 'boolean', at);
        else assert.ok(typeof v === 'number' && v > 0 && v <= 1, `${at}: ${v}`);
      }
    }
    if (SERVING.includes(e.tool) && e.standalone !== false) {
      assert.equal(e.expect.mode, 'inference', `${e.file}: a serving command`);
      assert.ok(e.expect['inference.engine'], `${e.file}: the engine`);
    }
  }
});

test('the spread issue #25 asks for: at least 48 files, and per tool', () => {
  const n = (pred) => sources.filter(pred).length;
  assert.ok(sources.length >= 48, `${sources.length} files`);
  const by = (t) => n((e) => e.tool === t);
  assert.ok(by('axolotl') >= 8, `axolotl ${by('axolotl')}`);
  assert.ok(by('torchtune') >= 8, `torchtune ${by('torchtune')}`);
  assert.ok(by('deepspeed') >= 6, `deepspeed ${by('deepspeed')}`);
  assert.ok(n((e) => e.tool === 'accelerate' && !e.file.endsWith('.sh')) >= 4, 'accelerate configs');
  assert.ok(by('litgpt') >= 5, `litgpt ${by('litgpt')}`);
  const launch = n((e) => (e.tool === 'torchrun' || e.tool === 'accelerate') && e.file.endsWith('.sh'));
  assert.ok(launch >= 3, `torchrun / HF launch lines ${launch}`);
  const serving = n((e) => SERVING.includes(e.tool) && e.standalone !== false);
  assert.ok(serving >= 12, `serving commands ${serving}`);
  for (const t of SERVING) assert.ok(by(t) >= 1, t);
});

// The references between files, resolved as each project resolves them.
function references(e) {
  const text = readFileSync(join(dir, e.file), 'utf8');
  const project = e.file.split('/')[0];
  const here = dirname(e.file);
  const out = [];
  if (e.tool === 'axolotl') {  // deepspeed: named from axolotl's root
    for (const m of text.matchAll(/^deepspeed:\s*(\S+)/gm)) out.push(join(project, m[1]));
  }
  for (const m of text.matchAll(/deepspeed_config_file:\s*(\S+)/g)) out.push(join(here, m[1]));  // from the YAML
  if (e.file.endsWith('.sh')) {  // a command line (a YAML's comments may quote commands that are not its own)
    for (const m of text.matchAll(/--config_file[= ](\S+)/g)) out.push(join(project, m[1]));  // trl: its root
    if (e.tool === 'torchtune') {  // a built-in config name
      for (const m of text.matchAll(/--config (\S+)/g)) out.push(join(project, 'recipes/configs', `${m[1]}.yaml`));
    }
    for (const m of text.matchAll(/--extra_llm_api_options (\S+)/g)) out.push(join(here, m[1]));
  }
  return out.map((p) => normalize(p));
}

test('a file another names is there, at the path its project resolves it to, and listed', () => {
  const files = new Set(sources.map((x) => x.file));
  let count = 0;
  for (const e of sources) {
    for (const ref of references(e)) {
      count++;
      assert.ok(existsSync(join(dir, ref)), `${e.file} names ${ref}`);
      assert.ok(files.has(ref), `${ref} (named by ${e.file}) is in SOURCES.json`);
    }
  }
  assert.ok(count >= 10, `${count} references`);
});

// The resolved scenario's value at a dotted path.
function at(scenario, path) {
  return path.split('.').reduce((o, k) => (o == null ? undefined : o[k]), scenario);
}

const ALL_LINEAR = ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'];
const modules = (v) => [...new Set(v.flatMap((m) => (m === 'all_linear' ? ALL_LINEAR : [m])))].sort();

const hasCheck = spawnSync(cli, ['check', '--help'], { encoding: 'utf8' }).status === 0;
test('gpumem check reads every real file: exit 0 or 3, and the fields the file sets in the resolved scenario',
  { skip: hasCheck ? false : 'gpumem check is not in this CLI yet' }, () => {
    let fit = 0, total = 0;
    const problems = [];
    for (const e of sources.filter((x) => x.standalone !== false)) {
      // Run from the project's folder, as a user runs it from the project's root.
      const project = e.file.split('/')[0];
      const r = spawnSync(cli, ['check', relative(project, e.file), ...(e.check_args || []), '--json'],
        { cwd: join(dir, project), encoding: 'utf8' });
      total++;
      if (r.status !== 0 && r.status !== 3) {
        problems.push(`${e.file}: exit ${r.status}: ${r.stderr.trim() || r.stdout.slice(0, 300)}`);
        continue;
      }
      if (r.status === 0) fit++;
      const result = JSON.parse(r.stdout);
      for (const [k, v] of Object.entries(e.expect)) {
        const got = at(result.scenario, k);
        const same = k === 'training.lora.target_modules' ? Array.isArray(got) &&
          JSON.stringify(modules(got)) === JSON.stringify(modules(v)) : JSON.stringify(got) === JSON.stringify(v);
        if (!same) problems.push(`${e.file}: ${k} is ${JSON.stringify(got)}, the file sets ${JSON.stringify(v)}`);
      }
    }
    process.stdout.write(`# real configs read: ${total}, fit: ${fit}, do not fit: ${total - fit - problems.length}\n`);
    assert.deepEqual(problems, []);
  });
