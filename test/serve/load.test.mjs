// A bounded load test: 64 concurrent clients x 8 requests of mixed lengths
// with shared prefixes, some streamed and cancelled mid-stream. Every
// finished response equals the same request served alone (a server with
// batch 1 and no prefix cache); afterwards no KV block is in use (each is
// free or cached-evictable), and the metrics' counters equal the requests
// made.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from './harness.mjs';

const CLIENTS = 64, PER_CLIENT = 8;
const system = { role: 'system', content: 'Answer in one sentence.' };
const questions = ['What is cruft?', 'Define kludge.', 'What is a hacker?', 'What does "foo" mean?',
                   'Who is a wizard?', 'What is a bug?', 'Define hack.', 'What is a daemon?'];

/// Distinct requests: with or without the shared system message, one or
/// two turns, 4 to 40 new tokens.
function distinctRequests() {
  const out = [];
  questions.forEach((q, i) => {
    out.push({ messages: [{ role: 'user', content: q }], max_tokens: 4 + 4 * i });
    out.push({ messages: [system, { role: 'user', content: q }], max_tokens: 40 - 3 * i });
    out.push({ messages: [system, { role: 'user', content: questions[0] },
                          { role: 'assistant', content: 'Something left over.' },
                          { role: 'user', content: q }], max_tokens: 12 });
  });
  return out.map((r) => ({ model: 'trained-cohere2-f32', temperature: 0, ...r }));
}

async function metric(url, name) {
  const text = await (await fetch(`${url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(name + ' '));
  return Number(line.split(' ')[1]);
}

it('serves 64 concurrent clients as it serves each request alone', { timeout: 600000 }, async () => {
  const requests = distinctRequests();
  const alone = await startServer(['--max-batch', '1', '--no-prefix-cache']);
  const expected = [];
  try {
    for (const r of requests)
      expected.push((await alone.client().chat.completions.create(r)).choices[0].message.content);
  } finally {
    assert.equal(await alone.stop(), 0);
  }

  const server = await startServer(['--max-batch', '32', '--kv-blocks', '2400']);
  const client = server.client({ timeout: 600000 });
  let finished = 0, cancelled = 0, made = 0;
  const clientRun = async (c) => {
    for (let k = 0; k < PER_CLIENT; k++) {
      const n = (c * PER_CLIENT + k) * 7 % requests.length;
      made++;
      if ((c + k) % 10 === 3) {
        // Streamed, then dropped after two chunks: the server cancels it.
        const controller = new AbortController();
        const stream = await client.chat.completions.create(
          { ...requests[n], max_tokens: 400, ignore_eos: true, stream: true },
          { signal: controller.signal });
        let chunks = 0;
        try {
          for await (const _ of stream) if (++chunks === 2) controller.abort();
        } catch (e) {
          assert.ok(controller.signal.aborted, String(e));
        }
        cancelled++;
        continue;
      }
      const r = await client.chat.completions.create(requests[n]);
      assert.equal(r.choices[0].message.content, expected[n], `request ${n}`);
      finished++;
    }
  };
  try {
    await Promise.all(Array.from({ length: CLIENTS }, (_, c) => clientRun(c)));
    assert.equal(made, CLIENTS * PER_CLIENT);
    // The engine notices the last cancellations at its next step.
    for (let i = 0; i < 100 && await metric(server.url, 'cohere2c_num_requests_running') > 0; i++)
      await new Promise((r) => setTimeout(r, 100));
    const text = await (await fetch(`${server.url}/metrics`)).text();
    for (const line of text.split('\n').filter((l) => l.startsWith('cohere2c_kv_cache_blocks{')))
      if (line.includes('state="used"')) assert.equal(line.split(' ')[1], '0', line);
    const count = (reason) =>
      metric(server.url, `cohere2c_request_success_total{finished_reason="${reason}"}`);
    assert.equal(await count('stop') + await count('length'), finished);
    assert.equal(await count('cancelled'), cancelled);
    assert.equal(await count('error'), 0);
    assert.ok(await metric(server.url, 'cohere2c_prefix_cache_hits_total') > 0);
  } finally {
    assert.equal(await server.stop(), 0);
  }
});
