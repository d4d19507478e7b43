// The bundled presets' dtype against their checkpoints' actual size on the Hub.
//
//   node --test tests/cli/checkpoint.test.mjs      (reads presets/models only; needs no build)
//
// The default inference weight dtype (and the KV-cache dtype) come from the config's torch_dtype,
// so a config whose dtype does not match the stored weights (a float32 re-save of an fp16 model, a
// config with no dtype at all, which reads as fp32) doubles or halves the default estimate. Each
// record's "checkpoint" says what the Hub stores: {bytes, bytes_per_param, source, dtype_agrees}
// where a size was found (bytes: the safetensors index total_size, a single file's size, or the sum
// of the shard sizes a tree page shows, then "rounded": true), or {unknown: "why"} where it was not.
// Here bytes / total_params must be within 3 % of the config dtype's bytes (2 for bfloat16/float16,
// 4 for float32), unless the record says why not: "quantized": true, or a checkpoint.note (buffers or
// a tied embedding stored in the file, or a disagreement left on purpose). Records without a
// "checkpoint" field are not checked (new presets get one when their size is looked up).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const dir = path.resolve(here, '..', '..', 'presets', 'models');
const TOLERANCE = 0.03;

// The dtype the estimator reads, as core/src/model/config.cpp (read_storage) does: torch_dtype or dtype of the language
// model's config (text_config for multimodal wrappers), else of the top level; none: fp32
// (transformers' default), or bf16 for a quantized checkpoint (gpt-oss).
const DTYPE_BYTES = { bfloat16: 2, float16: 2, half: 2, float32: 4, float: 4 };
function configDtype(config) {
  const text = config.text_config && typeof config.text_config === 'object' ? config.text_config : null;
  for (const src of [text, config]) {
    if (!src) continue;
    for (const key of ['torch_dtype', 'dtype']) {
      if (typeof src[key] === 'string') return src[key].toLowerCase().replace(/^torch\./, '');
    }
  }
  const quantized = 'quantization_config' in config || (text && 'quantization_config' in text);
  return quantized ? 'bfloat16' : 'float32';
}

const records = fs
  .readdirSync(dir)
  .filter((f) => f.endsWith('.json'))
  .sort()
  .map((f) => ({ file: f, record: JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) }))
  .filter(({ record }) => record.checkpoint !== undefined);

test('checkpoint records are well formed', () => {
  assert.ok(records.length > 0, 'no preset carries a checkpoint field');
  for (const { file, record } of records) {
    const ck = record.checkpoint;
    assert.equal(typeof ck, 'object', `${file}: checkpoint must be an object`);
    if ('bytes' in ck) {
      assert.ok(Number.isInteger(ck.bytes) && ck.bytes > 0, `${file}: checkpoint.bytes must be a positive integer`);
      assert.equal(typeof ck.source, 'string', `${file}: checkpoint.source must say where the size came from`);
      assert.ok(ck.source.length > 10, `${file}: checkpoint.source is too short to cite a page`);
      assert.equal(typeof ck.dtype_agrees, 'boolean', `${file}: checkpoint.dtype_agrees must be true or false`);
      const bpp = ck.bytes / record.total_params;
      assert.ok(Math.abs(ck.bytes_per_param - bpp) < 0.006, `${file}: bytes_per_param ${ck.bytes_per_param}, bytes / total_params = ${bpp.toFixed(4)}`);
      if (!ck.dtype_agrees) assert.ok(ck.note, `${file}: a checkpoint that disagrees with the config dtype must say why in checkpoint.note`);
    } else {
      assert.equal(typeof ck.unknown, 'string', `${file}: checkpoint has neither bytes nor unknown`);
      assert.ok(ck.unknown.length > 10, `${file}: checkpoint.unknown must say why`);
    }
  }
});

test('checkpoint bytes per parameter match the config dtype (within 3 %)', () => {
  const tally = { sourced: 0, unknown: 0, exceptions: [] };
  for (const { file, record } of records) {
    const ck = record.checkpoint;
    if (!('bytes' in ck)) {
      tally.unknown++;
      continue;
    }
    tally.sourced++;
    const dtype = configDtype(record.config);
    const want = DTYPE_BYTES[dtype];
    assert.ok(want, `${file}: config dtype ${dtype} has no byte size here`);
    const bpp = ck.bytes / record.total_params;
    if (ck.quantized === true) {
      // Quantized weights take fewer bytes than the unquantized dtype, whatever the scheme.
      assert.ok(bpp < want, `${file}: quantized checkpoint at ${bpp.toFixed(2)} bytes/param, not below ${want}`);
      tally.exceptions.push(`${record.model_id} (quantized)`);
      continue;
    }
    if (ck.note) {
      // An explained difference: still the same element size unless the record says it disagrees.
      const stored = bpp > 3 ? 4 : 2;
      assert.equal(stored === want, ck.dtype_agrees, `${file}: ~${stored} bytes/param stored, config ${dtype} (${want}); dtype_agrees is ${ck.dtype_agrees}`);
      tally.exceptions.push(`${record.model_id} (${ck.dtype_agrees ? 'explained' : 'DISAGREES'})`);
      continue;
    }
    const off = Math.abs(bpp / want - 1);
    assert.ok(
      off <= TOLERANCE,
      `${file}: ${ck.bytes} bytes / ${record.total_params} params = ${bpp.toFixed(3)} bytes/param, config ${dtype} ` +
        `is ${want} (${(off * 100).toFixed(1)} % off; mark the record quantized or explain it in checkpoint.note)`,
    );
    assert.equal(ck.dtype_agrees, true, `${file}: within tolerance but dtype_agrees is false`);
  }
  console.log(`checkpoint sizes: ${tally.sourced} sourced, ${tally.unknown} unknown; exceptions: ${tally.exceptions.join(', ')}`);
});
