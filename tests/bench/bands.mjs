// The runs behind the error band (presets/error_bands.json): each scored validation case
// (tests/data/validation/cases) estimated by the gpumem CLI as a user would, with its class as the
// estimate gives it, the key of its resolved scenario (so its own estimate leaves it out) and
// measured / estimated for the figure its source measured. The core reads the file (core/src/band/).
//
//   node tests/bench/bands.mjs            compare the file with what the current estimator gives (exit 1: stale)
//   node tests/bench/bands.mjs --write    write it (./make.sh bands); run after any change to the memory model
//   env GPUMEM_CLI: the gpumem binary (default build/native/core/cli/gpumem)
//
// tests/cli/bands.test.mjs fails when the file is stale.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { GiB, fieldOf, loadCases, root, scenarioOf } from './cases.mjs';

export const bandsFile = join(root, 'presets/error_bands.json');

// A source's document: its repository and file ("pytorch/torchtune README.md"), the unit the coverage
// benchmark splits by, so that rows of one table never sit on both sides.
export const documentOf = (source) => source.split(/\s+/).slice(0, 2).join(' ');

// [{id, source, mode, stack, method, gpus, figure, ratio, key}] for the cases answered as a user could
// (an estimate that fails, or a model only staged in presets/pending, has no residual to give).
export function bandRuns(cli) {
  const cases = loadCases(false).filter((c) => c.measured.gib != null);
  const input = cases.map((c) => JSON.stringify(scenarioOf(c, cli))).join('\n') + '\n';
  const run = spawnSync(cli, ['estimate', '--jsonl'], { input, encoding: 'utf8', maxBuffer: 1 << 28 });
  if (run.error) throw run.error;
  const results = run.stdout.trim().split('\n').map((l) => JSON.parse(l));
  if (results.length !== cases.length) throw new Error(`${results.length} results for ${cases.length} cases: ${run.stderr}`);
  const runs = [];
  cases.forEach((c, i) => {
    const r = results[i];
    if (!r.ok || c.staged) return;
    const figure = fieldOf[c.measured.metric];
    const band = r.per_gpu.band;
    runs.push({ id: c.id, source: documentOf(c.source), ...band.class, figure,
      ratio: Math.round(c.measured.gib * GiB / r.per_gpu[figure] * 1e4) / 1e4, key: r.scenario_key });
  });
  return runs;
}

// The file's text: one run a line, so a change to the memory model shows as a readable diff.
export function bandsText(runs) {
  const head = {
    about: 'measured / estimated for each scored validation case (tests/data/validation/cases), by class; ' +
      'the error band on every estimate is drawn from these (core/src/band/). Generated: do not edit.',
    regenerate: 'node tests/bench/bands.mjs --write (./make.sh bands) after any change to the memory model',
  };
  const lines = runs.map((r) => '    ' + JSON.stringify(r));
  return '{\n' + Object.entries(head).map(([k, v]) => `  ${JSON.stringify(k)}: ${JSON.stringify(v)},\n`).join('') +
    '  "runs": [\n' + lines.join(',\n') + '\n  ]\n}\n';
}

// Runs per class, then per coarser level: what the fallback sees.
export function classSizes(runs) {
  const count = (key) => {
    const m = new Map();
    for (const r of runs) m.set(key(r), (m.get(key(r)) || 0) + 1);
    return [...m].sort((a, b) => b[1] - a[1]);
  };
  return {
    class: count((r) => `${r.mode} / ${r.stack} / ${r.method} / ${r.gpus}`),
    mode_method: count((r) => `${r.mode} / ${r.method}`),
    mode: count((r) => r.mode),
  };
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const cli = process.env.GPUMEM_CLI || join(root, 'build/native/core/cli/gpumem');
  if (!existsSync(cli)) {
    console.error(`bands: no CLI at ${cli} (build it first: cmake --build build/native --target gpumem)`);
    process.exit(2);
  }
  const runs = bandRuns(cli);
  const text = bandsText(runs);
  const sizes = classSizes(runs);
  console.log(`${runs.length} runs`);
  for (const [level, rows] of Object.entries(sizes))
    console.log(`  by ${level}: ` + rows.map(([k, n]) => `${k} ${n}`).join(', '));
  if (process.argv.includes('--write')) {
    writeFileSync(bandsFile, text);
    console.log(`wrote ${bandsFile}`);
  } else if (!existsSync(bandsFile) || readFileSync(bandsFile, 'utf8') !== text) {
    console.error(`${bandsFile} is stale against the current estimator: run node tests/bench/bands.mjs --write`);
    process.exit(1);
  } else {
    console.log(`${bandsFile} is current`);
  }
}
