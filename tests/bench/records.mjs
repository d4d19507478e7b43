// The published measured peaks as calibration records, one JSON object per line on stdout: the
// input of `gpumem calibrate` (README, "Calibrate to your cluster"). Each record's scenario is what
// the accuracy benchmark estimates for the case.
//
//   node tests/bench/records.mjs [--source REGEX] [--not-source REGEX] > records.jsonl
//   env GPUMEM_CLI: the gpumem binary (default build/native/core/cli/gpumem)
import { join } from 'node:path';
import { loadCases, root, scenarioOf } from './cases.mjs';

const cli = process.env.GPUMEM_CLI || join(root, 'build/native/core/cli/gpumem');
const option = (name) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? new RegExp(process.argv[i + 1], 'i') : null;
};
const only = option('--source');
const not = option('--not-source');
for (const c of loadCases()) {
  if (c.measured.gib == null) continue;
  if (only && !only.test(c.source)) continue;
  if (not && not.test(c.source)) continue;
  const record = { id: c.id, source: c.source, scenario: scenarioOf(c, cli),
    measured: { metric: c.measured.metric, gib: c.measured.gib } };
  process.stdout.write(JSON.stringify(record) + '\n');
}
