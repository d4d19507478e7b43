// Accuracy benchmark: every published measured peak in tests/data/validation/cases, estimated by
// the gpumem CLI, compared with the figure the source measured. Prints one row per case, then the
// median and p90 absolute percentage error per class. A benchmark, not a test: it always exits 0
// unless the CLI is missing.
//
//   node tests/bench/validation.mjs [--all]     (--all: also the cases marked scored=false)
//   env GPUMEM_CLI: the gpumem binary (default build/native/core/cli/gpumem)
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const cli = process.env.GPUMEM_CLI || join(root, 'build/native/core/cli/gpumem');
const casesDir = join(root, 'tests/data/validation/cases');
const all = process.argv.includes('--all');
if (!existsSync(cli)) {
  console.error(`validation: no CLI at ${cli} (build it first: ./make.sh test, or cmake --build build/native)`);
  process.exit(2);
}

const GiB = 2 ** 30;
// The figure each source measured, and the result field that estimates it.
const fieldOf = {
  allocated: 'peak_allocated_bytes',
  reserved: 'peak_reserved_bytes',
  device_total: 'device_total_bytes',
  // torchtune's README does not say which of its logged peaks it shows; allocated is the
  // smallest of them, so the error shown is the most favourable one can claim.
  unknown: 'peak_allocated_bytes',
};

const cases = readdirSync(casesDir).filter((f) => f.endsWith('.json')).sort()
  .map((f) => JSON.parse(readFileSync(join(casesDir, f), 'utf8')))
  .filter((c) => all || c.scored);

function classOf(c) {
  const s = c.scenario;
  if (s.mode === 'inference') return 'inference';
  if ((s.hardware?.num_gpus ?? 1) > 1) return 'sharded';
  return s.training?.method === 'qlora' ? 'qlora' : s.training?.method === 'lora' ? 'lora' : 'full';
}

// One CLI process for every case: a scenario per line in, a result per line out. A source that
// names a GPU family without its size ("A100") is read by the CLI as it reads a user's: the family's
// default card, said in defaults_applied (the estimate of what the run uses does not depend on it).
// A case whose model is not bundled yet but is staged in presets/pending (its size fields checked
// against the published parameter count, its other fields not yet from a copy of the Hub file) is
// estimated from that staged config and marked * in the table: the memory model reads the sizes.
const staged = new Map();  // preset id -> its staged config, or null when bundled or not staged
const stagedConfig = (id) => {
  if (!staged.has(id)) {
    const file = join(root, 'presets', 'pending', `${id.replace('/', '__')}.json`);
    const bundled = spawnSync(cli, ['params', '--model', id], { encoding: 'utf8' }).status === 0;
    staged.set(id, !bundled && existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')).config : null);
  }
  return staged.get(id);
};
const input = cases.map((c) => {
  const { extras, ...scenario } = c.scenario;  // facts v1 cannot express stay out of the estimate
  const config = scenario.model?.preset ? stagedConfig(scenario.model.preset) : null;
  if (config) {
    scenario.model = { hf_config: config };
    c.staged = true;
  }
  // Facts a case keeps in extras that the scenario has since learned to express.
  const x = extras || {};
  const training = { ...(scenario.training || {}) };
  if (x.optimizer_in_backward) training.optimizer_in_backward = true;
  if (x.activation_offloading) training.activation_offloading = true;
  if (/lit-?gpt/i.test(x.framework || '')) training.framework = 'litgpt';
  else if (/torchtune/i.test(x.framework || '')) training.framework = 'torchtune';
  else if (/torchtitan/i.test(x.framework || '')) training.framework = 'torchtitan';
  if (x.double_quant != null && training.method === 'qlora') training.double_quant = !!x.double_quant;
  if (x.lora_dropout != null && training.lora) training.lora = { ...training.lora, dropout: x.lora_dropout };
  // torchtune's compile: True compiles the model and, since its recipes compile the loss (with the
  // chunked cross-entropy, autumn 2024), the loss too; torchtitan (before its compile.components
  // setting) compiles each TransformerBlock only. The case's source date tells which torchtune it was.
  const date = (c.source.match(/\d{4}-\d{2}-\d{2}/) || [''])[0];
  // torchtitan compiled its loss too from e10cb9494 (2024-10-22) until e8977b007 (2024-12-18, "turning off
  // compile on loss function": train.py's torch.compile(loss_fn) commented out, as at 9dec370), and again from
  // bbb1b616e (2025-04-02: components/loss.py build_cross_entropy_loss compiles it when training.compile), so
  // at e7c0cae (2025-06-11). The commits the cases name, resolved against torchtitan's history:
  const titanLossCompiled = { '9dec370': false, 'e7c0cae': true };
  const titanCommit = ((x.framework || '').match(/torchtitan ([0-9a-f]{7,})/) || [])[1];
  if (x.torch_compile)
    training.compile = (training.framework === 'torchtune' && date >= '2024-09-01') ||
      (training.framework === 'torchtitan' && titanLossCompiled[titanCommit]) ? 'layers_and_loss' : 'layers';
  if (scenario.mode !== 'inference') scenario.training = training;
  // The HF Trainer of 2022 ran on PyTorch 1.x, whose zero_grad() kept the gradients allocated, and
  // stepped with transformers' own AdamW (optim "adamw_hf", its default then), a Python loop over the
  // parameters whose only temporary is one parameter's sqrt (at most the word embeddings here, 0.12
  // GiB), not the multi-tensor step's state-sized one. A CUDA context the source measured is used as is.
  const overheads = { ...(scenario.overheads || {}) };
  if (/HF Trainer .*2022/.test(x.framework || '')) {
    overheads.zero_grad_set_to_none = 0;
    overheads.optimizer_step_temp_copies = 0;
  }
  const context = (c.notes || '').match(/CUDA context ~(\d+) MiB/);
  if (context) overheads.cuda_context_gib = Number(context[1]) / 1024;
  if (Object.keys(overheads).length) scenario.overheads = overheads;
  return JSON.stringify(scenario);
}).join('\n') + '\n';
const run = spawnSync(cli, ['estimate', '--jsonl'], { input, encoding: 'utf8', maxBuffer: 1 << 28 });
const results = run.stdout.trim().split('\n').map((l) => JSON.parse(l));

const rows = [];
const byClass = {};
let skipped = 0;
console.log('id     class      model                                        metric        measured  predicted    error');
cases.forEach((c, i) => {
  const r = results[i];
  const cls = classOf(c);
  const model = ((c.staged ? '*' : '') + (c.scenario.model?.preset || c.scenario.model?.name || 'config.json')).slice(0, 44).padEnd(44);
  const metric = c.measured.metric;
  if (c.measured.gib == null) {
    console.log(`${c.id}   ${cls.padEnd(9)}  ${model} ${metric.padEnd(12)}  no figure in GiB: skipped`);
    skipped++;
    return;
  }
  if (!r.ok) {
    console.log(`${c.id}   ${cls.padEnd(9)}  ${model} ${metric.padEnd(12)}  skipped: ${r.errors[0].message.slice(0, 90)}`);
    skipped++;
    return;
  }
  const predicted = r.per_gpu[fieldOf[metric]] / GiB;
  const err = (predicted - c.measured.gib) / c.measured.gib * 100;
  rows.push({ id: c.id, cls, err });
  (byClass[cls] ||= []).push(Math.abs(err));
  console.log(`${c.id}   ${cls.padEnd(9)}  ${model} ${metric.padEnd(12)} ${c.measured.gib.toFixed(2).padStart(8)} ${predicted.toFixed(2).padStart(10)} ${(err >= 0 ? '+' : '') + err.toFixed(1).padStart(6)}%`);
});

const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  if (!s.length) return NaN;
  const pos = (s.length - 1) * q, lo = Math.floor(pos), hi = Math.ceil(pos);
  return s[lo] + (s[hi] - s[lo]) * (pos - lo);
};
// A case the CLI cannot answer counts as a 100 % error in every figure (and is counted), never left out.
console.log('\nabsolute percentage error by class (answered / in class; an unanswered case counts as 100 %)');
const classes = ['full', 'lora', 'qlora', 'sharded', 'inference'];
const withMisses = (keys) => {
  const answered = keys.flatMap((k) => byClass[k] || []);
  const total = cases.filter((c) => keys.includes(classOf(c))).length;
  return [answered, total, [...answered, ...Array(total - answered.length).fill(100)]];
};
const summary = [...classes.map((k) => [k, ...withMisses([k])]),
  ['training (all)', ...withMisses(classes.filter((k) => k !== 'inference'))],
  ['all', ...withMisses(classes)]];
for (const [name, answered, total, xs] of summary) {
  const within = xs.filter((x) => x <= 10).length;
  console.log(`  ${name.padEnd(15)} n=${String(answered.length).padStart(3)}/${String(total).padEnd(3)}  median ${quantile(xs, 0.5).toFixed(1).padStart(6)}%` +
    `  p90 ${quantile(xs, 0.9).toFixed(1).padStart(6)}%  within 10 %: ${String(within).padStart(3)}/${total} (${(within / total * 100).toFixed(0)} %)` +
    `  unanswered ${total - answered.length}`);
}
const signed = rows.map((r) => r.err);
console.log(`  bias: median signed error ${quantile(signed, 0.5).toFixed(1)}% (positive: over-estimates); ${skipped} case(s) skipped`);
const stagedCases = cases.filter((c) => c.staged).length;
if (stagedCases) console.log(`  * ${stagedCases} case(s) estimated from a staged config in presets/pending (sizes checked, not yet a copy of the Hub file)`);
