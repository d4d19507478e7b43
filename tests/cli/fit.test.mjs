// gpumem fit and gpumem chart as a user runs them: what would make a scenario fit (each suggestion a
// scenario that estimate confirms), and the peak against a size as an SVG that parses as XML.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const cli = process.env.GPUMEM_CLI || join(root, 'build/native/core/cli/gpumem');
const run = (args, input) => spawnSync(cli, args, { encoding: 'utf8', input });

test('fit: Llama-3.1-8B full fine-tuning on one H100 lists what fits, each confirmed by estimate', () => {
  const r = run(['fit', '--model', 'meta-llama/Llama-3.1-8B', '--json']);
  assert.equal(r.status, 0, r.stderr);
  const doc = JSON.parse(r.stdout);
  assert.equal(doc.fits, false);
  assert.ok(doc.suggestions.length >= 3);
  for (const s of doc.suggestions) {
    const e = JSON.parse(run(['estimate', '--scenario', '-', '--json'], JSON.stringify(s.scenario)).stdout);
    assert.equal(e.per_gpu.device_total_bytes, s.device_total_bytes, s.change);
    assert.equal(e.fits, true, s.change);
  }
  const text = run(['fit', '--model', 'meta-llama/Llama-3.1-8B']);
  assert.match(text.stdout, /does not fit: 157\.\d\d GiB of 79\.6\d GiB per GPU \(198 %\)/);
  assert.match(text.stdout, /LoRA \(rank 8\)/);
  assert.match(text.stdout, /1\. \[least change\] /);
  assert.match(text.stdout, /step \d+\.\d\d s, \d+ tokens\/s \(\d+\.\d\dx the scenario's speed\)/);
});

test('fit: runs whose error band tops the card only with --include-borderline', () => {
  const strict = run(['fit', '--model', 'meta-llama/Llama-3.1-8B']);
  assert.equal(strict.status, 0, strict.stderr);
  assert.match(strict.stdout, /What would make it fit with its error band:/);
  assert.match(strict.stdout, /up to [\d.]+ GiB at the band's top/);
  assert.doesNotMatch(strict.stdout, /\d\. 2 GPUs with ZeRO-3/);
  const loose = run(['fit', '--model', 'meta-llama/Llama-3.1-8B', '--include-borderline']);
  assert.equal(loose.status, 0, loose.stderr);
  assert.match(loose.stdout, /\d\. 2 GPUs with ZeRO-3/);
});

test('fit: a scenario that fits gets its headroom and what each change saves', () => {
  const r = run(['fit', '--model', 'meta-llama/Llama-3.2-1B', '--lora']);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, / fits: .* free\./);
  assert.match(r.stdout, /What each change would save:\n  \d+\. /);
  assert.match(r.stdout, /searched \d+ runs of \d+ variants in \d+ ms/);
});

test('chart: an SVG with the curve, the capacity and the max-fit line, well-formed XML', () => {
  const r = run(['chart', '--model', 'meta-llama/Llama-3.1-8B', '--lora']);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^<svg /);
  const parsed = spawnSync('python3', ['-c',
    'import sys, xml.etree.ElementTree as E; t = E.fromstring(sys.stdin.read()); ns = "{http://www.w3.org/2000/svg}";' +
    'print(len(t.findall(ns + "circle")), len(t.findall(ns + "polyline")))'], { input: r.stdout, encoding: 'utf8' });
  assert.equal(parsed.status, 0, parsed.stderr);
  const [circles, lines] = parsed.stdout.trim().split(' ').map(Number);
  const data = JSON.parse(run(['chart', '--model', 'meta-llama/Llama-3.1-8B', '--lora', '--json']).stdout);
  assert.equal(circles, data.points.length + 1);  // each point, and the ring around the scenario's own
  assert.equal(lines, 1);
  assert.match(r.stdout, /class="capacity"/);
  assert.match(r.stdout, new RegExp(`max fit ${data.max_fit}<`));
  const bad = run(['chart', '--model', 'meta-llama/Llama-3.1-8B', '--x', 'inference.context_len']);
  assert.equal(bad.status, 1);
  assert.match(bad.stderr, /field: must be one of training\.seq_len, training\.batch_size/);
});
