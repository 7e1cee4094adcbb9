// cohere2c-serve through the official OpenAI client, on the host target with
// the trained model (f32): answers equal the float64 reference's, streamed
// or not; usage, stop strings, logprobs, the models list; every error with
// its status; /health and /metrics (with curl, as an operator would).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import { chats, reference, referenceAnswer, startServer } from './harness.mjs';

const greedy = { model: 'trained-cohere2-f32', temperature: 0, max_tokens: 32 };

describe('completions', () => {
  let server, client;
  before(async () => {
    server = await startServer(['--max-batch', '8']);
    client = server.client();
  });
  after(async () => assert.equal(await server.stop(), 0));

  for (const name of Object.keys(chats)) {
    it(`answers ${name} as the float64 reference does`, async () => {
      const r = await client.chat.completions.create({ ...greedy, messages: chats[name] });
      assert.equal(r.choices[0].message.content, referenceAnswer(name));
      assert.equal(r.choices[0].message.role, 'assistant');
      assert.equal(r.usage.prompt_tokens, reference.prompts[name].length);
      const ended = referenceAnswer(name) !== referenceAnswer(name, { toEndOfTurn: false });
      assert.equal(r.choices[0].finish_reason, ended ? 'stop' : 'length');
      assert.equal(r.usage.total_tokens, r.usage.prompt_tokens + r.usage.completion_tokens);
      if (!ended) assert.equal(r.usage.completion_tokens, 32);
    });
  }

  it('streams deltas that join to the same text, with usage last', async () => {
    const stream = await client.chat.completions.create({
      ...greedy, messages: chats.chat_cruft, stream: true,
      stream_options: { include_usage: true } });
    let text = '', finish = null, usage = null, chunks = 0;
    for await (const chunk of stream) {
      chunks++;
      if (chunk.usage) usage = chunk.usage;
      for (const c of chunk.choices) {
        text += c.delta.content ?? '';
        finish = c.finish_reason ?? finish;
      }
    }
    assert.equal(text, referenceAnswer('chat_cruft'));
    assert.equal(finish, 'length');
    assert.ok(chunks > 3, `${chunks} chunks`);
    assert.deepEqual(usage, { prompt_tokens: 16, completion_tokens: 32, total_tokens: 48,
                              prompt_tokens_details: { cached_tokens: usage.prompt_tokens_details.cached_tokens } });
  });

  it('stops at a stop string, which is not part of the output', async () => {
    const full = referenceAnswer('chat_cruft');
    for (const stop of ['routine', ' to disappear or', 'A r']) {
      const r = await client.chat.completions.create({ ...greedy, messages: chats.chat_cruft, stop });
      assert.equal(r.choices[0].message.content, full.slice(0, full.indexOf(stop)), stop);
      assert.equal(r.choices[0].finish_reason, 'stop');
      const stream = await client.chat.completions.create({
        ...greedy, messages: chats.chat_cruft, stop: [stop, 'never'], stream: true });
      let text = '';
      for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
      assert.equal(text, full.slice(0, full.indexOf(stop)), `streamed ${stop}`);
    }
  });

  it('reports logprobs: the greedy token is the most likely one', async () => {
    const r = await client.chat.completions.create({
      ...greedy, max_tokens: 8, messages: chats.chat_cruft, logprobs: true, top_logprobs: 5 });
    const content = r.choices[0].logprobs.content;
    assert.equal(content.length, 8);
    for (const entry of content) {
      assert.equal(entry.top_logprobs.length, 5);
      assert.equal(entry.top_logprobs[0].token, entry.token);
      assert.ok(Math.abs(entry.top_logprobs[0].logprob - entry.logprob) < 1e-6);
      assert.ok(entry.logprob <= 0);
      for (let i = 1; i < 5; i++)
        assert.ok(entry.top_logprobs[i].logprob <= entry.top_logprobs[i - 1].logprob);
    }
    assert.equal(content.map((e) => e.token).join(''), referenceAnswer('chat_cruft').slice(0, content.map((e) => e.token).join('').length));
  });

  it('serves /v1/completions: a string, a list of strings, token ids', async () => {
    const ids = reference.prompts.text_200;
    const r = await client.completions.create({ ...greedy, prompt: ids });
    assert.equal(r.choices[0].text, referenceAnswer('text_200'));
    const two = await client.completions.create({
      ...greedy, max_tokens: 4, prompt: [ids, reference.prompts.chat_cruft] });
    assert.equal(two.choices.length, 2);
    assert.equal(two.choices[1].text, referenceAnswer('chat_cruft').slice(0, two.choices[1].text.length));
    const text = await client.completions.create({ ...greedy, max_tokens: 4, prompt: 'In the beginning' });
    assert.equal(text.usage.completion_tokens, 4);
    const lp = await client.completions.create({ ...greedy, max_tokens: 3, prompt: ids, logprobs: 2 });
    assert.equal(lp.choices[0].logprobs.tokens.length, 3);
    assert.equal(lp.choices[0].logprobs.top_logprobs.length, 3);
  });

  it('lists the model', async () => {
    const models = await client.models.list();
    assert.deepEqual(models.data.map((m) => m.id), ['trained-cohere2-f32']);
  });

  it('refuses a body nested deeper than 64 levels, and keeps serving', async () => {
    // 100,000 nested arrays (200 KB): copying or quoting such a value
    // recursed once per level, and overflowed the HTTP thread's stack.
    const deep = '['.repeat(100000) + ']'.repeat(100000);
    const bodies = [
      ['/v1/chat/completions', `{"messages": ${deep}}`],
      ['/v1/chat/completions', `{"messages": [{"role": "user", "content": "x"}], "model": ${deep}}`],
      ['/v1/completions', `{"prompt": ${deep}}`],
      ['/tokenize', `{"prompt": "x", "extra": ${deep}}`],
    ];
    for (const [path, body] of bodies) {
      const r = await fetch(`${server.url}${path}`, {
        method: 'POST', headers: { 'content-type': 'application/json' }, body });
      assert.equal(r.status, 400, `${path} ${body.slice(0, 80)}`);
      const error = (await r.json()).error;
      assert.match(error.message, /^the body: arrays and objects nested more than 64 levels deep/);
    }
    assert.equal((await fetch(`${server.url}/health`)).status, 200);
  });

  it('answers bad requests with OpenAI errors', async () => {
    const post = (body, headers = {}) => fetch(`${server.url}/v1/chat/completions`, {
      method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
    const cases = [
      ['{"messages": [', 400],
      [JSON.stringify({ messages: 'hi' }), 400],
      [JSON.stringify({ messages: chats.chat_cruft, max_tokens: 'many' }), 400],
      [JSON.stringify({ messages: chats.chat_cruft, temperature: -1 }), 400],
      [JSON.stringify({ messages: chats.chat_cruft, top_logprobs: 30, logprobs: true }), 400],
      [JSON.stringify({ messages: [{ role: 'user', content: 'x' }, { role: 'user', content: 'y' }] }), 400],
      [JSON.stringify({ messages: [{ role: 'user', content: 'word '.repeat(3000) }] }), 400],
      [JSON.stringify({ messages: chats.chat_cruft, max_tokens: 5000 }), 400],
      [JSON.stringify({ messages: chats.chat_cruft, model: 'gpt-4' }), 404],
      // Fields that would change the answer and are not implemented are refused, not ignored.
      [JSON.stringify({ messages: chats.chat_cruft, logit_bias: { 19: -100 } }), 400],
      [JSON.stringify({ messages: chats.chat_cruft, presence_penalty: 0.5 }), 400],
      [JSON.stringify({ messages: chats.chat_cruft, model: 5 }), 400],
      [JSON.stringify({ messages: chats.chat_cruft, tools: 'x' }), 400],
      [JSON.stringify({ messages: chats.chat_cruft, documents: 5 }), 400],
      [JSON.stringify({ messages: [{ role: 'user' }] }), 400],
    ];
    for (const [body, status] of cases) {
      const r = await post(body);
      assert.equal(r.status, status, body.slice(0, 80));
      const error = (await r.json()).error;
      assert.equal(typeof error.message, 'string');
      assert.equal(error.code, status);
    }
    const roles = await (await post(cases[5][0])).json();
    assert.match(roles.error.message, /Conversation roles must alternate/);
    const overContext = await (await post(cases[7][0])).json();
    assert.equal(overContext.error.param, 'max_tokens');
    assert.match(overContext.error.message, /^max_tokens \(5000\) is more than the \d+ tokens the context \(2048\) leaves/);
    for (const [at, param] of [[11, 'model'], [12, 'tools'], [13, 'documents'],
                               [14, 'messages[0].content']])
      assert.equal((await (await post(cases[at][0])).json()).error.param, param, cases[at][0]);
    const bias = await (await post(cases[9][0])).json();
    assert.equal(bias.error.param, 'logit_bias');
    // Their neutral values are accepted.
    const neutral = await post(JSON.stringify({ messages: chats.chat_cruft, max_tokens: 2,
                                                presence_penalty: 0, logit_bias: {} }));
    assert.equal(neutral.status, 200);
    const long = await (await post(cases[6][0])).json();
    assert.match(long.error.message, /longer than the context|context/);
    const notFound = await fetch(`${server.url}/v1/nothing`);
    assert.equal(notFound.status, 404);
    assert.equal((await notFound.json()).error.code, 404);
    // The client library sees the same.
    await assert.rejects(client.chat.completions.create({ ...greedy, messages: [] }),
                         (e) => e.status === 400);
  });

  it('answers /health and /metrics to curl', () => {
    const health = execFileSync('curl', ['-s', '-o', '/dev/null', '-w', '%{http_code}',
                                         `${server.url}/health`]).toString();
    assert.equal(health, '200');
    const metrics = execFileSync('curl', ['-s', `${server.url}/metrics`]).toString();
    for (const name of ['cohere2c_num_requests_running', 'cohere2c_num_requests_waiting',
                        'cohere2c_kv_cache_blocks{group="full",state="used"}',
                        'cohere2c_kv_cache_free_blocks',
                        'cohere2c_prefix_cache_queries_total', 'cohere2c_prefix_cache_hits_total',
                        'cohere2c_prompt_tokens_total', 'cohere2c_generation_tokens_total',
                        'cohere2c_time_to_first_token_seconds_bucket',
                        'cohere2c_time_per_output_token_seconds_bucket',
                        'cohere2c_e2e_request_latency_seconds_bucket'])
      assert.ok(metrics.includes(name), name);
  });

  it('tokenizes and detokenizes', async () => {
    const post = async (path, body) => (await fetch(`${server.url}${path}`, {
      method: 'POST', body: JSON.stringify(body) })).json();
    const t = await post('/tokenize', { messages: chats.chat_cruft, add_generation_prompt: true });
    assert.deepEqual(t.tokens, reference.prompts.chat_cruft);
    const d = await post('/detokenize', { tokens: reference.prompts.chat_cruft });
    assert.match(d.prompt, /What is cruft\?/);
  });
});

describe('a second turn', () => {
  it('reuses the first turn\'s KV blocks and answers as without the cache', async () => {
    const cached = await startServer();
    const plain = await startServer(['--no-prefix-cache']);
    try {
      const turn1 = chats.chat_turns.slice(0, 1);
      const first = await cached.client().chat.completions.create({ ...greedy, messages: turn1 });
      const turn2 = [...turn1, first.choices[0].message, { role: 'user', content: 'And a cracker?' }];
      const second = await cached.client().chat.completions.create({ ...greedy, messages: turn2 });
      const alone = await plain.client().chat.completions.create({ ...greedy, messages: turn2 });
      assert.ok(second.usage.prompt_tokens_details.cached_tokens > 0);
      assert.equal(alone.usage.prompt_tokens_details.cached_tokens, 0);
      assert.equal(second.choices[0].message.content, alone.choices[0].message.content);
    } finally {
      assert.equal(await cached.stop(), 0);
      assert.equal(await plain.stop(), 0);
    }
  });
});

describe('access and limits', () => {
  it('needs the API key', async () => {
    const server = await startServer(['--api-key', 'sesame']);
    try {
      await assert.rejects(server.client().models.list(), (e) => e.status === 401);
      await assert.rejects(server.client({ apiKey: 'wrong' }).models.list(), (e) => e.status === 401);
      const ok = await server.client({ apiKey: 'sesame' }).models.list();
      assert.equal(ok.data.length, 1);
      // The scheme is case-insensitive (RFC 9110 11.1); the key is not.
      const lower = (key) => fetch(`${server.url}/v1/models`, { headers: { authorization: `bearer ${key}` } });
      assert.equal((await lower('sesame')).status, 200);
      assert.equal((await lower('SESAME')).status, 401);
      assert.equal((await fetch(`${server.url}/health`)).status, 200);
    } finally {
      assert.equal(await server.stop(), 0);
    }
  });

  // A client that asks for "100 Continue" before its body gets it (curl
  // does above 1 MiB, and waits a second without it); a body in a transfer
  // coding the server cannot read is refused with 501.
  it('answers Expect: 100-continue, and refuses a gzip body', async () => {
    const server = await startServer([]);
    try {
      const { port } = new URL(server.url);
      const body = JSON.stringify({ messages: chats.chat_cruft, max_tokens: 1 });
      const status = await new Promise((resolve, reject) => {
        const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: '/v1/chat/completions',
                                   headers: { Expect: '100-continue', 'Content-Type': 'application/json',
                                              'Content-Length': Buffer.byteLength(body) } });
        const waiting = setTimeout(() => reject(new Error('no 100 Continue in 5 s')), 5000);
        req.on('continue', () => { clearTimeout(waiting); req.end(body); });
        req.on('response', (res) => { res.resume(); resolve(res.statusCode); });
        req.on('error', reject);
      });
      assert.equal(status, 200);
      const raw = execFileSync('curl', ['-s', '-w', ' %{http_code}', '-H', 'Transfer-Encoding: gzip',
                                        '--data-binary', '{}', `${server.url}/v1/chat/completions`]).toString();
      assert.match(raw, /not supported \(only chunked\).* 501$/);
    } finally {
      assert.equal(await server.stop(), 0);
    }
  });

  // A client that stops sending partway through its headers or its body
  // is closed after --idle-timeout, as a silent one is.
  it('closes a connection whose request stops partway after the idle timeout', async () => {
    const server = await startServer(['--idle-timeout', '2']);
    try {
      const { port } = new URL(server.url);
      const body = JSON.stringify({ messages: chats.chat_cruft, max_tokens: 1 });
      const stalled = (request) => new Promise((resolve, reject) => {
        const socket = net.connect(port, '127.0.0.1', () => socket.write(request));
        const start = Date.now();
        const giveUp = setTimeout(() => { socket.destroy(); reject(new Error('still open after 20 s')); },
                                  20000);
        socket.on('error', () => {});
        socket.on('close', () => { clearTimeout(giveUp); resolve((Date.now() - start) / 1000); });
        socket.resume();
      });
      const head = `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n`;
      const seconds = await Promise.all([
        stalled(head),
        stalled(`${head}Content-Length: ${Buffer.byteLength(body) + 100}\r\n\r\n${body}`)]);
      for (const s of seconds) assert.ok(s >= 1.5 && s < 10, `closed after ${s} s`);
      assert.equal((await fetch(`${server.url}/health`)).status, 200);
    } finally {
      assert.equal(await server.stop(), 0);
    }
  });

  it('refuses a body over the limit with 413 and a full queue with 503', async () => {
    const server = await startServer(['--max-body-bytes', '1000', '--max-batch', '1',
                                      '--max-waiting', '1']);
    try {
      const big = await fetch(`${server.url}/v1/chat/completions`, {
        method: 'POST', body: JSON.stringify({ messages: [{ role: 'user', content: 'x'.repeat(2000) }] }) });
      assert.equal(big.status, 413);
      const body = JSON.stringify({ messages: chats.chat_cruft, max_tokens: 200, ignore_eos: true });
      const all = await Promise.all(Array.from({ length: 8 }, () => fetch(
        `${server.url}/v1/chat/completions`, { method: 'POST', body })));
      const statuses = all.map((r) => r.status);
      assert.ok(statuses.includes(200), statuses.join());
      const busy = all.filter((r) => r.status === 503);
      assert.ok(busy.length > 0, statuses.join());
      for (const r of busy) assert.equal(r.headers.get('retry-after'), '1');
      // More prompts than the queue holds can never be admitted: 400, not 503.
      const many = await fetch(`${server.url}/v1/completions`, {
        method: 'POST', body: JSON.stringify({ prompt: ['a', 'b'], max_tokens: 1 }) });
      assert.equal(many.status, 400);
      assert.equal((await many.json()).error.param, 'prompt');
    } finally {
      assert.equal(await server.stop(), 0);
    }
  });
});
