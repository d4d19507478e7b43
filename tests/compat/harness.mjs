// What the compat tests share: the CLI run as a subprocess against the mock Hub (tests/browser/
// mock_hub.mjs, named by HF_ENDPOINT) with a throw-away HF_HOME, so that a model no preset answers
// to is fetched as a user's would be. The mock also serves tests/compat/data's config.json files
// (microsoft/DialoGPT-medium: its config.json at revision 7b40bb0f, 642 bytes).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { startMockHub } from '../browser/mock_hub.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
export const repo = path.resolve(here, '..', '..');
const cli = path.resolve(repo, process.env.GPUMEM_CLI || 'build/native/core/cli/gpumem');

export const DIALOGPT = {
  model_id: 'microsoft/DialoGPT-medium',
  config: JSON.parse(fs.readFileSync(path.join(here, 'data', 'microsoft__DialoGPT-medium.config.json'), 'utf8')),
};

// Starts the mock Hub; resolves with { hub, tmp, run(args, env), close() }. run resolves with
// { code, stdout, stderr, all }.
export async function startCompat() {
  const hub = await startMockHub({ records: [DIALOGPT] });
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gpumem-compat-'));
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(HF_|HUGGING)/.test(k)));
  const run = (args, env = {}) => new Promise((resolve, reject) => {
    const child = spawn(cli, args, { env: { ...clean, HF_ENDPOINT: hub.url, HF_HOME: path.join(tmp, 'hf'), ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, all: stdout + stderr });
    });
  });
  const close = async () => {
    await hub.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  };
  return { hub, tmp, run, close };
}

export const GiB = 2 ** 30;
