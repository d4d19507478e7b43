// What every browser-driving script here shares: Debian's Chromium with the flags that give it
// software WebGL and keep it off the network (docs/STYLE.md), and web/serve.mjs on a free port.
import { spawn } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { chromium } from 'playwright-core';

export const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const siteDir = resolve(process.env.GPUMEM_SITE_DIR ?? join(repo, 'build', 'wasm', 'site'));
export const chromiumPath = process.env.GPUMEM_CHROMIUM ?? '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu',
  '--use-angle=swiftshader', '--enable-unsafe-swiftshader',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
  '--no-first-run', '--disable-quic',
];

// Starts web/serve.mjs over `root` on a free loopback port; resolves with { child, url }.
export function startServer(root = siteDir) {
  return new Promise((resolveUrl, reject) => {
    const child = spawn(process.execPath,
      [join(repo, 'web', 'serve.mjs'), '--root', root, '--port', '0', '--host', '127.0.0.1'],
      { stdio: ['ignore', 'pipe', 'inherit'] });
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
      const match = output.match(/(http:\/\/\S+\/)/);
      if (match) resolveUrl({ child, url: match[1] });
    });
    child.on('exit', (code) => reject(new Error(`serve.mjs exited with ${code}: ${output}`)));
  });
}

// Collects what a page reports as wrong into `problems`: console errors, WebGL misuse (reported as
// warnings, e.g. a buffer overflow in the renderer), uncaught page errors and failed requests.
export function watchForProblems(page, problems) {
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console.error: ${message.text()} (${message.location().url})`);
    if (message.type() === 'warning' && /INVALID_|context lost/i.test(message.text()))
      problems.push(`WebGL: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('requestfailed', (request) => problems.push(`request failed: ${request.url()}`));
}

// Chromium with a fresh profile (removed by the caller: userDataDir); resolves with
// { context, page, userDataDir }.
export async function launchBrowser(viewport) {
  const userDataDir = await mkdtemp(join(tmpdir(), 'gpumem-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: chromiumPath, headless: true, args: CHROMIUM_ARGS, viewport, deviceScaleFactor: 1,
  });
  const page = context.pages()[0] ?? await context.newPage();
  return { context, page, userDataDir };
}
