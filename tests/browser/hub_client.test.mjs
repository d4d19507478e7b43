// web/hub.js under node, without a browser: how typed ids and Hub URLs become checked ids, that
// nothing unsafe becomes a URL, and how each HTTP outcome is classified (a fake fetch stands in
// for the network). The page-level behaviour is in hub.test.mjs.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { test } from 'node:test';

const hub = createRequire(import.meta.url)('../../web/hub.js');

test('ids and Hub URLs are read into { id, revision }', () => {
  const cases = [
    ['Qwen/Qwen3-8B', { id: 'Qwen/Qwen3-8B', revision: 'main' }],
    ['  gpt2 ', { id: 'gpt2', revision: 'main' }],
    ['https://huggingface.co/Qwen/Qwen3-8B', { id: 'Qwen/Qwen3-8B', revision: 'main' }],
    ['https://huggingface.co/Qwen/Qwen3-8B/', { id: 'Qwen/Qwen3-8B', revision: 'main' }],
    ['https://huggingface.co/Qwen/Qwen3-8B/tree/v1.0', { id: 'Qwen/Qwen3-8B', revision: 'v1.0' }],
    ['https://huggingface.co/Qwen/Qwen3-8B/blob/main/config.json', { id: 'Qwen/Qwen3-8B', revision: 'main' }],
    ['https://hf-mirror.com/meta-llama/Llama-3.1-8B/resolve/abc123/config.json',
      { id: 'meta-llama/Llama-3.1-8B', revision: 'abc123' }],
    ['https://huggingface.co/gpt2/tree/main', { id: 'gpt2', revision: 'main' }],
  ];
  for (const [input, expected] of cases) assert.deepEqual(hub.parseModelInput(input), expected, input);
  assert.deepEqual(hub.parseModelInput('Qwen/Qwen3-8B', 'refs/pr/1'), { id: 'Qwen/Qwen3-8B', revision: 'refs/pr/1' });
});

test('anything that could leave the Hub path is refused before it becomes a URL', () => {
  for (const bad of ['', '../x', 'a/..', 'org/../../etc', 'a/b/c', '-x/y', 'x./y', 'a--b/c', 'a/b c', 'a/b?x=1',
    'a/b#frag', 'a%2F..%2Fb/c', 'javascript:alert(1)', 'file:///etc/passwd', 'x'.repeat(600), 'org/' + 'n'.repeat(97)])
    assert.throws(() => hub.parseModelInput(bad), hub.HubInputError, JSON.stringify(bad));
  assert.throws(() => hub.parseModelInput('Qwen/Qwen3-8B', '../main'), hub.HubInputError);
  assert.throws(() => hub.parseModelInput('Qwen/Qwen3-8B', '-rf'), hub.HubInputError);
  for (const bad of ['ftp://x', 'https://user:pw@huggingface.co', 'https://huggingface.co/?q=1', 'not a url'])
    assert.throws(() => hub.normalizeBase(bad), hub.HubInputError, bad);
  assert.equal(hub.normalizeBase(''), 'https://huggingface.co');
  assert.equal(hub.normalizeBase('http://127.0.0.1:9/hub/'), 'http://127.0.0.1:9/hub');
  assert.equal(hub.configUrl('https://huggingface.co', 'Qwen/Qwen3-8B', 'refs/pr/1'),
    'https://huggingface.co/Qwen/Qwen3-8B/resolve/refs%2Fpr%2F1/config.json');
});

function fakeFetch(routes, seen = []) {
  return async (url, init) => {
    seen.push({ url, init });
    const route = routes.find(([pattern]) => pattern.test(url));
    if (!route) throw new TypeError('Failed to fetch');
    const [, status, body, headers = {}] = route;
    if (status === 'hang') return new Promise((_, reject) => init.signal.addEventListener('abort', () => reject(new Error('aborted'))));
    return new Response(body, { status, headers });
  };
}

test('each outcome is classified, and the token goes only into the Authorization header', async () => {
  const config = JSON.stringify({ model_type: 'llama' });
  const seen = [];
  const ok = await hub.fetchModel({ id: 'a/b', token: 'hf_secret', fetch: fakeFetch([
    [/config\.json$/, 200, config], [/api\/models/, 200, JSON.stringify({ safetensors: { total: 42 } })]], seen) });
  assert.equal(ok.ok, true);
  assert.deepEqual(ok.api, { safetensors_total: 42, gated: null });
  for (const { url, init } of seen) {
    assert.ok(!url.includes('hf_secret'));
    assert.equal(init.headers.Authorization, 'Bearer hf_secret');
    assert.equal(init.referrerPolicy, 'no-referrer');
    assert.equal(init.credentials, 'omit');
  }
  const kinds = [
    [404, '{}', {}, 'not_found'], [401, '{}', {}, 'unauthorized'], [403, '{}', {}, 'forbidden'],
    [401, '{}', { 'X-Error-Code': 'RepoNotFound' }, 'not_found'], [429, '{}', { 'Retry-After': '7' }, 'rate_limited'],
    [500, '', {}, 'server'], [502, '', {}, 'server'], [200, '<html>', {}, 'malformed'], [200, '{"model_type": "ll', {}, 'truncated'],
    [200, '[1, 2]', {}, 'malformed'], [200, 'x'.repeat(5 * 1024 * 1024), {}, 'too_large'],
  ];
  for (const [status, body, headers, kind] of kinds) {
    const answer = await hub.fetchModel({ id: 'a/b', token: 'hf_secret', fetch: fakeFetch([[/config\.json$/, status, body, headers]]) });
    assert.equal(answer.ok, false);
    assert.equal(answer.kind, kind, `${status} ${body.slice(0, 20)}`);
    assert.ok(!answer.message.includes('hf_secret'), 'the token is never in a message');
  }
  assert.equal((await hub.fetchModel({ id: 'a/b', fetch: fakeFetch([]) })).kind, 'network');
  assert.equal((await hub.fetchModel({ id: 'a/b', timeoutMs: 50, fetch: fakeFetch([[/config/, 'hang']]) })).kind, 'timeout');
  assert.equal((await hub.fetchModel({ id: 'a/b', offline: true, fetch: fakeFetch([]) })).kind, 'offline');
  assert.equal((await hub.fetchModel({ id: '../b', fetch: fakeFetch([]) })).kind, 'input');
});

test('the token goes only to https://huggingface.co or an https origin the user confirmed', async () => {
  const config = JSON.stringify({ model_type: 'llama' });
  const routes = [[/config\.json$/, 200, config], [/api\/models/, 200, '{}']];
  const sent = async (base, trustedOrigins) => {
    const seen = [];
    const answer = await hub.fetchModel({ base, id: 'a/b', token: 'hf_secret', trustedOrigins, fetch: fakeFetch(routes, seen) });
    assert.equal(answer.ok, true, base);
    assert.equal(seen.length, 2, base);
    const withToken = seen.filter(({ init }) => 'Authorization' in init.headers).length;
    assert.ok(withToken === 0 || withToken === seen.length, `${base}: all requests or none carry it`);
    assert.equal(answer.token_withheld, withToken === 0, `${base}: the answer says when it was withheld`);
    return withToken > 0;
  };
  assert.equal(await sent(undefined), true, 'the default Hub');
  assert.equal(await sent('https://huggingface.co/'), true, 'the Hub, spelled with a slash');
  for (const base of ['https://hf-mirror.com', 'https://evil.hf.co', 'https://huggingface.co.evil.example',
    'http://127.0.0.1:9', 'http://localhost:8080', 'http://huggingface.co'])
    assert.equal(await sent(base), false, `${base} is not trusted without the user's word`);
  assert.equal(await sent('https://hf-mirror.com', ['https://hf-mirror.com']), true, 'a confirmed origin');
  assert.equal(await sent('https://hf-mirror.com:8443', ['https://hf-mirror.com']), false, 'another port is another origin');
  assert.equal(await sent('http://127.0.0.1:9', ['http://127.0.0.1:9']), false, 'plain http never, even confirmed');
  assert.equal(hub.tokenOrigin('https://hf-mirror.com/some/path', new Set(['https://hf-mirror.com'])), 'https://hf-mirror.com');
  assert.equal(hub.tokenOrigin('not a url', []), null);
  // No token, nothing withheld.
  const plain = await hub.fetchModel({ base: 'https://hf-mirror.com', id: 'a/b', fetch: fakeFetch(routes) });
  assert.equal(plain.token_withheld, false);
});
