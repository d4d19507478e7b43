// The published measured peaks (tests/data/validation/cases) as scenarios gpumem reads: each case's
// facts that live in its "extras" translated into the scenario fields that express them. Shared by
// the accuracy benchmark (validation.mjs) and the calibration records (records.mjs).
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const casesDir = join(root, 'tests/data/validation/cases');

export const GiB = 2 ** 30;
// The figure each source measured, and the result field that estimates it.
export const fieldOf = {
  allocated: 'peak_allocated_bytes',
  reserved: 'peak_reserved_bytes',
  device_total: 'device_total_bytes',
  // torchtune's README does not say which of its logged peaks it shows; allocated is the
  // smallest of them, so the error shown is the most favourable one can claim.
  unknown: 'peak_allocated_bytes',
};


// The cases, sorted by id; only the scored ones unless `all`.
export function loadCases(all = false) {
  return readdirSync(casesDir).filter((f) => f.endsWith('.json')).sort()
    .map((f) => JSON.parse(readFileSync(join(casesDir, f), 'utf8')))
    .filter((c) => all || c.scored);
}

export function classOf(c) {
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
const stagedConfig = (cli, id) => {
  if (!staged.has(id)) {
    const file = join(root, 'presets', 'pending', `${id.replace('/', '__')}.json`);
    const bundled = spawnSync(cli, ['params', '--model', id], { encoding: 'utf8' }).status === 0;
    staged.set(id, !bundled && existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')).config : null);
  }
  return staged.get(id);
};
// The scenario gpumem estimates for a case (marks c.staged when it reads a staged config).
export function scenarioOf(c, cli) {
  const { extras, ...scenario } = c.scenario;  // facts v1 cannot express stay out of the estimate
  const config = scenario.model?.preset ? stagedConfig(cli, scenario.model.preset) : null;
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
  // A release family whose allocations differ from today's (training.framework_version), named by the case.
  if (x.framework_version) training.framework_version = x.framework_version;
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
  // GiB), not the multi-tensor step's state-sized one; CUDA loaded every kernel module at start (the
  // 1343 MiB context the same source measures). That release family is what a user names with
  // training.framework_version "transformers_2022" (docs/memory-model.md, Frameworks).
  if (/HF Trainer .*2022/.test(x.framework || '')) training.framework_version = 'transformers_2022';
  if (scenario.overheads) scenario.overheads = { ...scenario.overheads };
  return scenario;
}
