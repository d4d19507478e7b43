#!/usr/bin/env node
// The gpumem check action's verdict: reads what check.sh left for each config and writes the verdict
// table (file, format, model, peak per GPU, capacity, headroom, verdict) as Markdown, to
// $GITHUB_STEP_SUMMARY when it is set, and as plain text to stdout. Exits 1 when any config does not
// fit (gpumem check's exit code 3), is invalid (1), was refused as usage (2) or ran into anything else;
// 0 when every config fits. Node's standard library only (no npm packages on the runner).
//
//   node summary.mjs RESULTS_DIR [--summary FILE]
//
// RESULTS_DIR holds, for each config i = 1, 2, ...: i.file (the path as given), i.code (the exit
// code), i.json (stdout of `gpumem check FILE --json`) and i.err (its stderr).
import { appendFileSync, existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const GiB = 2 ** 30;
const VERDICT = { 0: 'fits', 3: 'does not fit', 1: 'invalid', 2: 'usage error' };

function readText(path) {
  return existsSync(path) ? readFileSync(path, 'utf8') : '';
}

// One config's outcome from its files. Anything unexpected (no exit code, output that is not the
// JSON a fit or no-fit promises) is an error row: the job fails rather than passing on a guess.
export function readResult(dir, id) {
  const file = readText(join(dir, `${id}.file`));
  const codeText = readText(join(dir, `${id}.code`)).trim();
  const code = /^\d+$/.test(codeText) ? Number(codeText) : null;
  const stderr = readText(join(dir, `${id}.err`));
  const stdout = readText(join(dir, `${id}.json`));
  let result = null, parseError = null;
  if (stdout.trim() !== '') {
    try {
      result = JSON.parse(stdout);
    } catch (e) {
      parseError = e.message;
    }
  }
  return { file, code, result, parseError, stderr };
}

export function readResults(dir) {
  const ids = readdirSync(dir).map((n) => /^(\d+)\.file$/.exec(n)).filter(Boolean).map((m) => Number(m[1]));
  return ids.sort((a, b) => a - b).map((id) => readResult(dir, id));
}

const gib = (bytes) => (typeof bytes === 'number' && Number.isFinite(bytes) ? `${(bytes / GiB).toFixed(1)} GiB` : '');

function firstLine(text) {
  return (text || '').split('\n').map((l) => l.trim()).find((l) => l !== '') || '';
}

function modelOf(r) {
  const m = (r.scenario && r.scenario.model) || {};
  return m.preset || m.name || m.hf_id || (r.model && r.model.name) || '';
}

function gpusOf(r) {
  const h = (r.scenario && r.scenario.hardware) || {};
  if (!h.gpu) return '';
  return h.num_gpus > 1 ? `${h.num_gpus} x ${h.gpu}` : h.gpu;
}

// The row for one config. peak: the per-GPU device total (the allocator's reserve, the CUDA context and
// the communication buffers included), which is what the card must hold.
export function rowOf(x) {
  const r = x.result;
  const row = { file: x.file, format: '', model: '', gpus: '', peak: '', capacity: '', headroom: '', verdict: '',
                ok: false };
  if (r && r.check) row.format = r.check.format || '';
  if (r && r.ok !== false) {
    row.model = modelOf(r);
    row.gpus = gpusOf(r);
    const g = r.per_gpu || {};
    const peak = g.device_total_bytes ?? g.total_bytes;
    const cap = g.capacity_bytes;
    row.peak = gib(peak);
    row.capacity = gib(cap);
    if (typeof peak === 'number' && typeof cap === 'number') {
      const h = cap - peak;
      row.headroom = `${h < 0 ? '-' : ''}${gib(Math.abs(h))}${cap > 0 ? ` (${((h / cap) * 100).toFixed(0)} %)` : ''}`;
    }
  }
  if (x.code === null) {
    row.verdict = 'error: gpumem did not run';
  } else if ((x.code === 0 || x.code === 3) && (!r || x.parseError || !r.per_gpu)) {
    row.verdict = `error: exit ${x.code} without a result${x.parseError ? ` (${x.parseError})` : ''}`;
  } else if (x.code === 0 && r.fits === false) {
    row.verdict = 'error: exit 0 but the result says it does not fit';
  } else if (x.code === 0) {
    row.verdict = 'fits';
    row.ok = true;
  } else if (x.code === 3) {
    row.verdict = 'does not fit';
  } else {
    const why = (r && Array.isArray(r.errors) && r.errors.length > 0 && r.errors[0].message) || firstLine(x.stderr);
    row.verdict = `${VERDICT[x.code] || `error (exit ${x.code})`}${why ? `: ${why}` : ''}`;
  }
  return row;
}

const COLUMNS = [['file', 'File'], ['format', 'Format'], ['model', 'Model'], ['gpus', 'GPUs'],
                 ['peak', 'Peak per GPU'], ['capacity', 'Capacity'], ['headroom', 'Headroom'],
                 ['verdict', 'Verdict']];

function cell(text) {  // one Markdown table cell: no line breaks, | escaped
  return String(text).replace(/[\r\n]+/g, ' ').replace(/\|/g, '\\|');
}

export function markdown(rows) {
  const failed = rows.filter((r) => !r.ok).length;
  const head = rows.length === 0 ? 'no config was checked'
    : failed === 0 ? `all ${rows.length} config${rows.length > 1 ? 's' : ''} fit`
    : `${failed} of ${rows.length} config${rows.length > 1 ? 's' : ''} failed`;
  const lines = [`### gpumem check: ${head}`, '',
                 `| ${COLUMNS.map((c) => c[1]).join(' | ')} |`, `|${COLUMNS.map(() => '---').join('|')}|`];
  for (const r of rows) {
    const mark = r.ok ? ':white_check_mark:' : ':x:';
    lines.push(`| ${COLUMNS.map(([k]) => (k === 'verdict' ? `${mark} ${cell(r[k])}` : cell(r[k]))).join(' | ')} |`);
  }
  return lines.join('\n') + '\n';
}

export function text(rows) {
  const w = COLUMNS.map(([k, h]) => Math.max(h.length, ...rows.map((r) => String(r[k]).length)));
  const line = (vals) => vals.map((v, i) => String(v).padEnd(w[i])).join('  ').trimEnd();
  return [line(COLUMNS.map((c) => c[1])), ...rows.map((r) => line(COLUMNS.map(([k]) => r[k])))].join('\n') + '\n';
}

// The job passes only when there was something to check and every config fits.
export function passed(rows) {
  return rows.length > 0 && rows.every((r) => r.ok);
}

function main(argv) {
  let dir = null, summary = process.env.GITHUB_STEP_SUMMARY || '';
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--summary' && i + 1 < argv.length) summary = argv[++i];
    else if (dir === null && !argv[i].startsWith('--')) dir = argv[i];
    else {
      process.stderr.write(`summary.mjs: unexpected argument ${argv[i]}\n`);
      process.stderr.write('usage: node summary.mjs RESULTS_DIR [--summary FILE]\n');
      return 2;
    }
  }
  if (dir === null || !existsSync(dir)) {
    process.stderr.write('usage: node summary.mjs RESULTS_DIR [--summary FILE]\n');
    return 2;
  }
  const rows = readResults(dir).map(rowOf);
  process.stdout.write(text(rows));
  if (summary) appendFileSync(summary, markdown(rows));
  if (rows.length === 0) process.stderr.write('gpumem check: no config was checked\n');
  for (const r of rows.filter((x) => !x.ok)) process.stderr.write(`gpumem check: ${r.file}: ${r.verdict}\n`);
  return passed(rows) ? 0 : 1;
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) process.exitCode = main(process.argv.slice(2));
