// What every browser-driving script here shares: Debian's Chromium with the flags that give it
// software WebGL and keep it off the network (docs/STYLE.md), and web/serve.mjs on a free port.
import { spawn } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

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
