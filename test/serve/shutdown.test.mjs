// Stopping the server: the first SIGTERM stops accepting and lets the
// requests in flight finish within the grace period, then the server exits 0;
// a second SIGTERM ends it at once with 128 + 15, as a shell reports a
// process the signal killed.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, chats } from './harness.mjs';

/// Starts streaming a long greedy answer; resolves once its first chunk came.
async function streamInFlight(server, maxTokens) {
  const stream = await server.client().chat.completions.create({
    messages: chats.chat_cruft, max_tokens: maxTokens, ignore_eos: true, temperature: 0,
    stream: true, stream_options: { include_usage: true } });
  const iterator = stream[Symbol.asyncIterator]();
  const first = await iterator.next();
  assert.equal(first.done, false);
  return iterator;
}

/// Reads the rest of a stream; resolves with the completion tokens it reports.
async function drain(iterator) {
  let usage = null;
  for (let r = await iterator.next(); !r.done; r = await iterator.next())
    if (r.value.usage) usage = r.value.usage;
  return usage?.completion_tokens;
}

const stderrSays = (server, text) => new Promise((resolve) => {
  const poll = () => (server.stderr().includes(text) ? resolve() : setTimeout(poll, 10));
  poll();
});

it('finishes the request in flight after SIGTERM, then exits 0', async () => {
  const server = await startServer(['--shutdown-grace', '600']);
  const iterator = await streamInFlight(server, 64);
  server.proc.kill('SIGTERM');
  await stderrSays(server, 'shutting down');
  assert.equal(await drain(iterator), 64);
  assert.equal(await server.exited, 0);
});

it('exits at once with 143 on a second SIGTERM', { timeout: 60000 }, async () => {
  const server = await startServer(['--shutdown-grace', '600']);
  // Longer than the test could wait for: only the second signal ends it.
  const iterator = await streamInFlight(server, 1900);
  server.proc.kill('SIGTERM');
  await stderrSays(server, 'shutting down');
  server.proc.kill('SIGTERM');
  assert.equal(await server.exited, 143);
  assert.match(server.stderr(), /again: exiting now/);
  await drain(iterator).catch(() => {}); // the connection was cut
});
