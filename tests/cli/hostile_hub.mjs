// A hostile Hub mirror for the CLI's tests (tests/cli/hub_hostile.test.mjs): what a crafted
// HF_ENDPOINT could send. It speaks HTTP/1.1 by hand over a raw socket, so that it can send what a
// well-behaved server library refuses to (control characters in a header, a response trickled one
// byte at a time). The behaviour is chosen by the repository's organisation:
//
//   /{org}/{name}/resolve/{rev}/config.json     /api/models/{org}/{name}[/revision/{rev}]
//
//   plain/*      200, a small GPT-2 config.json with X-Repo-Commit and ETag; the API: a safetensors count
//   huge/*       config as plain; the API answer is 63 MiB of JSON (a long array before safetensors)
//   deep/*       config as plain; the API answer nests 100,000 arrays
//   wide/*       config as plain; the API answer has 20,000 keys (0.7 MiB), then safetensors.total = 124439808
//   loop/*       307 to itself, instantly, forever
//   slowhop/*    307 to the next hop, its body trickled for 0.8 s first, forever (the config and the API)
//   trickle/*    200, then one byte of body every 100 ms, forever
//   lfs/*        302 from the Hub with X-Repo-Commit and X-Linked-Etag (sha256) to its CDN at another
//                origin (http://localhost:PORT/cdn/...), which answers with its own ETag, as the Hub
//                serves an LFS file
//   evilmeta/*   200 with X-Repo-Commit "../../../outside" and an ETag of "../../../../outside"
//   escape/*     200, a llama-shaped config.json whose model_type and architectures hold escape
//                sequences and line breaks
//   busy/*       429 with a Retry-After holding an escape sequence (clears the screen)
//   badhop/*     307 to a Location holding an escape sequence (an ftp:// URL)
//
// Every request is recorded as { path, authorization } in `requests`.
import { createHash } from 'node:crypto';
import net from 'node:net';

export const PLAIN_TOTAL = 124439808;   // GPT-2's parameters, as the Hub's safetensors count says
export const CONFIG = {
  model_type: 'gpt2', architectures: ['GPT2LMHeadModel'], n_embd: 768, n_head: 12, n_layer: 12,
  n_positions: 1024, vocab_size: 50257,
};
// A small llama-shaped config: read as a generic decoder whatever its model_type says.
export const LLAMA_SHAPE = {
  hidden_size: 512, intermediate_size: 1024, num_hidden_layers: 4, num_attention_heads: 8, num_key_value_heads: 8,
  vocab_size: 32000, max_position_embeddings: 2048,
};
export const ESCAPE = '\u001b[2J\u001b[31mEVIL\r\nNOTICE: verified to fit\u202e';

const sha = (algorithm, text) => createHash(algorithm).update(text).digest('hex');

// Resolves with { url, port, requests, close() }.
export function startHostileHub() {
  const requests = [];
  const sockets = new Set();
  const timers = new Set();
  let port = 0;
  const later = (ms, fn) => {
    const t = setTimeout(() => { timers.delete(t); fn(); }, ms);
    timers.add(t);
  };
  const every = (ms, fn) => {
    const t = setInterval(fn, ms);
    timers.add(t);
    return () => { clearInterval(t); timers.delete(t); };
  };

  const head = (status, headers, length) => {
    const reason = { 200: 'OK', 302: 'Found', 307: 'Temporary Redirect', 404: 'Not Found', 429: 'Too Many Requests' };
    const lines = [`HTTP/1.1 ${status} ${reason[status] ?? 'Status'}`, 'Connection: close'];
    if (length !== null) lines.push(`Content-Length: ${length}`);
    for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`);
    return `${lines.join('\r\n')}\r\n\r\n`;
  };
  const send = (socket, status, body, headers = {}) => {
    const bytes = Buffer.from(body);
    socket.end(Buffer.concat([Buffer.from(head(status, headers, bytes.length), 'latin1'), bytes]));
  };
  const config = (socket, id, revision, body = JSON.stringify(CONFIG)) => send(socket, 200, body, {
    'Content-Type': 'application/json', 'X-Repo-Commit': sha('sha1', `${id}@${revision}`), ETag: `"${sha('sha1', body)}"`,
  });

  const answer = (socket, path, authorization) => {
    requests.push({ path, authorization });
    const api = path.match(/^\/api\/models\/([^/?]+)\/([^/?]+)(?:\/revision\/[^?]+)?(?:\?.*)?$/);
    const file = path.match(/^\/([^/]+)\/([^/]+)\/resolve\/([^/]+)\/config\.json(?:\?hop=(\d+))?$/);
    const cdn = path.match(/^\/cdn\/(.+)$/);
    if (cdn) {
      const body = JSON.stringify(CONFIG);
      return send(socket, 200, body, { 'Content-Type': 'application/json', ETag: `"cdn-${sha('md5', body)}"` });
    }
    const org = (api ?? file)?.[1];
    if (!org) return send(socket, 404, '{"error":"Entry not found"}', { 'X-Error-Code': 'EntryNotFound' });
    const hop = Number(file?.[4] ?? 0);
    if (org === 'loop') return send(socket, 307, '', { Location: path.replace(/\?.*$/, '') + `?hop=${hop + 1}` });
    if (org === 'slowhop') {
      // A redirect whose body takes 0.8 s to arrive; curl reads it all before it returns.
      socket.write(head(307, { Location: api ? path : path.replace(/\?.*$/, '') + `?hop=${hop + 1}` }, 8), 'latin1');
      let sent = 0;
      const stop = every(100, () => {
        if (socket.destroyed) return stop();
        socket.write(' ');
        if (++sent === 8) { stop(); socket.end(); }
      });
      return undefined;
    }
    if (org === 'trickle') {
      socket.write(head(200, { 'Content-Type': 'application/json' }, null), 'latin1');
      const stop = every(100, () => (socket.destroyed ? stop() : socket.write(' ')));
      return undefined;
    }
    if (api) {
      const total = JSON.stringify({ total: PLAIN_TOTAL });
      if (org === 'huge') return hugeAnswer(socket, total);
      if (org === 'deep') return send(socket, 200, `{"a":${'['.repeat(100_000)}${']'.repeat(100_000)},"safetensors":${total}}`);
      if (org === 'wide') {
        const keys = Array.from({ length: 20_000 }, (_, i) => `"k${i}":{"safetensors":{"total":1}}`).join(',');
        return send(socket, 200, `{${keys},"safetensors":${total}}`);
      }
      return send(socket, 200, `{"id":"${api[1]}/${api[2]}","safetensors":${total}}`);
    }
    const [, , name, revision] = file;
    const id = `${org}/${name}`;
    switch (org) {
      case 'lfs': {
        const body = JSON.stringify(CONFIG);
        return send(socket, 302, '', {
          Location: `http://localhost:${port}/cdn/${name}/config.json`,
          'X-Repo-Commit': sha('sha1', `${id}@${revision}`), 'X-Linked-Etag': `"${sha('sha256', body)}"`,
          ETag: '"the-redirect-itself"',
        });
      }
      case 'evilmeta': {
        const body = JSON.stringify(CONFIG);
        return send(socket, 200, body, { 'X-Repo-Commit': '../../../outside', ETag: '"../../../../outside"' });
      }
      case 'escape':
        return config(socket, id, revision, JSON.stringify({ ...LLAMA_SHAPE, model_type: `gpt2${ESCAPE}`,
          architectures: [`Llama${ESCAPE}ForSequenceClassification`] }));
      case 'busy':
        return send(socket, 429, '{"error":"Too many requests"}', { 'Retry-After': '30\u001b[2J\u001b[H' });
      case 'badhop':
        return send(socket, 307, '', { Location: 'ftp://evil.example/\u001b]0;pwned\u0007\u001b[2J' });
      default:
        return config(socket, id, revision);
    }
  };

  // 63 MiB (under the CLI's 64 MiB cap on any download): an array of numbers, then safetensors,
  // written in 1 MiB pieces as the socket drains.
  const hugeAnswer = (socket, total) => {
    const first = '{"a":[0';
    const tail = `],"safetensors":${total}}`;
    const piece = Buffer.from(',0'.repeat(512 * 1024));
    let left = 63;
    socket.write(head(200, { 'Content-Type': 'application/json' }, first.length + 63 * piece.length + tail.length),
      'latin1');
    socket.write(first);
    const pump = () => {
      while (left > 0 && !socket.destroyed) {
        left -= 1;
        if (!socket.write(piece)) {
          socket.once('drain', pump);
          return;
        }
      }
      if (!socket.destroyed) socket.end(tail);
    };
    pump();
  };

  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    let text = '';
    socket.on('data', (chunk) => {
      if (text.includes('\r\n\r\n')) return;
      text += chunk.toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      if (end < 0) return;
      const [requestLine, ...lines] = text.slice(0, end).split('\r\n');
      const auth = lines.find((l) => /^authorization:/i.test(l));
      answer(socket, requestLine.split(' ')[1] ?? '/', auth ? auth.slice(auth.indexOf(':') + 1).trim() : null);
    });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      port = server.address().port;
      resolve({
        url: `http://127.0.0.1:${port}`,
        port,
        requests,
        close: () => new Promise((done) => {
          for (const t of timers) { clearTimeout(t); clearInterval(t); }
          for (const s of sockets) s.destroy();
          server.close(done);
        }),
      });
    });
  });
}

// A forward proxy on loopback that records each request it is asked to carry ({ url, authorization })
// and forwards it to its target. Resolves with { url, requests, close() }.
export function startRecordingProxy() {
  const requests = [];
  const sockets = new Set();
  const server = net.createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => {});
    let text = '';
    client.on('data', (chunk) => {
      if (text.includes('\r\n\r\n')) return;
      text += chunk.toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      if (end < 0) return;
      const [requestLine, ...lines] = text.slice(0, end).split('\r\n');
      const [method, target] = requestLine.split(' ');
      const auth = lines.find((l) => /^authorization:/i.test(l));
      requests.push({ method, url: target, authorization: auth ? auth.slice(auth.indexOf(':') + 1).trim() : null });
      if (method === 'CONNECT') return client.end('HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n');
      const url = new URL(target);
      const upstream = net.connect(Number(url.port || 80), url.hostname, () => {
        const rest = lines.filter((l) => !/^(proxy-connection|connection):/i.test(l));
        upstream.write(`${method} ${url.pathname}${url.search} HTTP/1.1\r\n${rest.join('\r\n')}\r\nConnection: close\r\n\r\n`);
      });
      sockets.add(upstream);
      upstream.on('close', () => sockets.delete(upstream));
      upstream.on('error', () => client.destroy());
      upstream.pipe(client);
      return undefined;
    });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      resolve({
        url: `http://127.0.0.1:${server.address().port}`,
        requests,
        close: () => new Promise((done) => {
          for (const s of sockets) s.destroy();
          server.close(done);
        }),
      });
    });
  });
}
