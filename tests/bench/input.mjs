// Input-size benchmark: how the time to answer grows with the size of what is read (issue #31).
// JSON documents of many tiny values (wide: [{}, {}, ...] and {"k0": {}, ...}) of 1, 4 and 16 MiB
// through the native CLI (`params --hf-config FILE`: read, parse, refuse as a config) and through
// the WebAssembly module (`params`), with the ratio of each time to the 1 MiB one: linear parsing
// gives about 4 and 16. A 64 MiB document (over parse_json's 16 MiB limit) is refused by its size.
// Then the near-miss suggestion for a typed model name of 1 KiB to 1 MiB (`estimate --model`
// of a scenario naming it as model.preset). Prints figures; exits 0 unless a binary is missing or
// an answer is not the expected refusal.
//
//   node tests/bench/input.mjs
//   env GPUMEM_CLI (default build/native/core/cli/gpumem), GPUMEM_WASM (default build/wasm/wasm/gpumem.js)
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const cli = process.env.GPUMEM_CLI || join(root, 'build/native/core/cli/gpumem');
const wasm = process.env.GPUMEM_WASM || join(root, 'build/wasm/wasm/gpumem.js');
const MiB = 1 << 20;

const wide = {
  array: (size) => { const n = Math.max(1, Math.floor((size - 2 + 1) / 3)); return '[' + Array(n).fill('{}').join(',') + ']'; },
  object: (size) => {  // at most `size` bytes
    const parts = [];
    for (let i = 0, length = 1; ; i++) {
      const p = `"k${i}":{}`;
      if (length + p.length + 1 > size) break;
      parts.push(p);
      length += p.length + 1;
    }
    return '{' + parts.join(',') + '}';
  },
};
const sizes = [1, 4, 16];
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
const ms = (t0) => Number(process.hrtime.bigint() - t0) / 1e6;
const fail = (why) => { console.error(`input: ${why}`); process.exit(1); };
const row = (label, times) => {
  const base = times[0];
  return `  ${label.padEnd(30)}` + times.map((t, i) => `${sizes[i]} MiB ${t.toFixed(0).padStart(6)} ms (x${(t / base).toFixed(1)})`).join('   ');
};

const dir = mkdtempSync(join(tmpdir(), 'gpumem-input-bench-'));
try {
  if (existsSync(cli)) {
    console.log('native CLI, params --hf-config FILE (process start and file read included), median of 3:');
    for (const [shape, make] of Object.entries(wide)) {
      const times = [];
      for (const size of sizes) {
        const file = join(dir, `${shape}-${size}.json`);
        writeFileSync(file, make(size * MiB));
        const runs = [];
        for (let r = 0; r < 3; r++) {
          const t0 = process.hrtime.bigint();
          const out = spawnSync(cli, ['params', '--hf-config', file], { encoding: 'utf8' });
          runs.push(ms(t0));
          if (out.status !== 1) fail(`${shape} ${size} MiB: exit ${out.status}, expected 1 (not a config): ${out.stderr.slice(0, 200)}`);
        }
        times.push(median(runs));
      }
      console.log(row(`wide ${shape}`, times));
    }
    const big = join(dir, 'big.json');
    writeFileSync(big, wide.array(64 * MiB));
    const t0 = process.hrtime.bigint();
    const out = spawnSync(cli, ['params', '--hf-config', big], { encoding: 'utf8' });
    const t = ms(t0);
    if (!/larger than the limit/.test(out.stderr)) fail(`64 MiB: expected a refusal by size, got: ${out.stderr.slice(0, 200)}`);
    console.log(`  wide array, 64 MiB: refused in ${t.toFixed(0)} ms: ${out.stderr.trim().split('\n')[0]}`);

    console.log('native CLI, estimate --scenario FILE naming an unknown model.preset of N bytes (the near-miss search):');
    const cells = [];
    for (const n of [1024, 64 * 1024, MiB]) {
      const file = join(dir, `preset-${n}.json`);
      writeFileSync(file, JSON.stringify({ model: { preset: 'meta-llama/Llama-3.1-8B' + 'x'.repeat(n - 23) } }));
      const t0 = process.hrtime.bigint();
      const out = spawnSync(cli, ['estimate', '--scenario', file], { encoding: 'utf8' });
      const t = ms(t0);
      if (!/is not a bundled preset/.test(out.stderr)) fail(`preset of ${n} bytes: ${out.stderr.slice(0, 200)}`);
      cells.push(`${n >= MiB ? `${n / MiB} MiB` : `${n / 1024} KiB`} ${t.toFixed(0)} ms`);
    }
    console.log(`  ${cells.join('   ')}`);
  } else {
    console.log(`native CLI: not built (${cli})`);
  }

  if (existsSync(wasm)) {
    const m = await createRequire(import.meta.url)(wasm)();
    console.log(`WebAssembly module under node ${process.version}, params(text), median of 3:`);
    for (const [shape, make] of Object.entries(wide)) {
      const times = [];
      for (const size of sizes) {
        const text = make(size * MiB);
        const runs = [];
        for (let r = 0; r < 3; r++) {
          const t0 = process.hrtime.bigint();
          const result = JSON.parse(m.params(text));
          runs.push(ms(t0));
          if (result.ok !== false) fail(`WebAssembly ${shape} ${size} MiB: expected a refusal (not a config)`);
        }
        times.push(median(runs));
      }
      console.log(row(`wide ${shape}`, times));
    }
    const t0 = process.hrtime.bigint();
    const result = JSON.parse(m.params(wide.array(64 * MiB)));
    console.log(`  wide array, 64 MiB: refused in ${ms(t0).toFixed(0)} ms: ${result.errors?.[0]?.message}`);
  } else {
    console.log(`WebAssembly module: not built (${wasm})`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
