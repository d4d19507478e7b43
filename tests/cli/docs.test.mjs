// The repository's own documents: every relative link in README.md, SECURITY.md, docs/*.md and
// wasm/README.md names a file (or folder) inside this repository, and every #anchor names a
// heading of the page it points to. No CLI needed.
//
//   node --test tests/cli/docs.test.mjs
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..', '..');

const pages = ['README.md', 'SECURITY.md', 'wasm/README.md',
  ...fs.readdirSync(path.join(repo, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)]
  .filter((p) => fs.existsSync(path.join(repo, p)));

// Markdown without its fenced code blocks and inline code, where link syntax is not a link.
function prose(text) {
  return text.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');
}

// GitHub's heading anchors: lower case, punctuation dropped, spaces as hyphens, repeats numbered.
function anchors(text) {
  const seen = new Map();
  const out = new Set();
  for (const line of text.replace(/^```[\s\S]*?^```/gm, '').split('\n')) {
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = m[1].toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
    const n = seen.get(base) || 0;
    seen.set(base, n + 1);
    out.add(n ? `${base}-${n}` : base);
  }
  return out;
}

function links(text) {
  const out = [];
  for (const m of prose(text).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) out.push(m[1]);
  return out;
}

test('the documents exist', () => {
  for (const p of ['README.md', 'docs/architecture.md', 'docs/memory-model.md', 'docs/scenario.md'])
    assert.ok(pages.includes(p), `${p} is missing`);
});

for (const page of pages) {
  test(`${page}: every relative link resolves inside the repository`, () => {
    const text = fs.readFileSync(path.join(repo, page), 'utf8');
    const problems = [];
    for (const link of links(text)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(link)) continue;  // https:, mailto: ...
      const [target, anchor] = link.split('#');
      const file = target ? path.resolve(repo, path.dirname(page), decodeURIComponent(target)) : path.join(repo, page);
      const rel = path.relative(repo, file);
      if (rel.startsWith('..') || path.isAbsolute(rel)) {
        problems.push(`${link}: points outside the repository`);
        continue;
      }
      if (!fs.existsSync(file)) {
        problems.push(`${link}: no such file ${rel}`);
        continue;
      }
      if (anchor && file.endsWith('.md') && !anchors(fs.readFileSync(file, 'utf8')).has(anchor))
        problems.push(`${link}: no heading #${anchor} in ${rel}`);
    }
    assert.deepEqual(problems, []);
  });
}
