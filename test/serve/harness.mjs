// Starts cohere2c-serve for a test and knows the trained model's references.
//
// Environment (set by ctest): COHERE2C_SERVE (the binary), COHERE2C_ARTIFACT
// (the trained model compiled for the host target), COHERE2C_MODEL_DIR
// (test/data/models/trained-cohere2).
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import OpenAI from 'openai';

export const serveBinary = process.env.COHERE2C_SERVE;
export const artifact = process.env.COHERE2C_ARTIFACT;
export const modelDir = process.env.COHERE2C_MODEL_DIR;
const readJson = (name) => JSON.parse(readFileSync(`${modelDir}/${name}`, 'utf8'));
export const reference = readJson('reference.json');
const tokenizer = readJson('tokenizer.json');
const eosToken = readJson('tokenizer_config.json').eos_token;

/// The reference's answer to prompt `name` as a chat client shows it: the
/// greedy text up to the end of the turn, special tokens removed.
export function referenceAnswer(name, { toEndOfTurn = true } = {}) {
  let text = reference.texts[name];
  if (toEndOfTurn) text = text.split(eosToken)[0];
  for (const t of tokenizer.added_tokens) if (t.special) text = text.split(t.content).join('');
  return text;
}

/// Starts a server on a free port with `args` after the artifact; resolves
/// once it is ready. stop() sends SIGTERM and resolves with the exit code.
export async function startServer(args = [], { waitReady = true } = {}) {
  const proc = spawn(serveBinary, [artifact, '--port', '0', ...args],
                     { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  const url = await new Promise((resolve, reject) => {
    let address = null;
    proc.stderr.on('data', (chunk) => {
      stderr += chunk;
      const m = stderr.match(/listening on (http:\/\/[0-9.:]+)/);
      if (m) address = m[1];
      if (address && (!waitReady || stderr.includes('ready:'))) resolve(address);
    });
    proc.on('exit', (code) => reject(new Error(`cohere2c-serve exited ${code}: ${stderr}`)));
  });
  const exited = new Promise((resolve) => proc.on('exit', (code) => resolve(code)));
  return {
    url,
    proc,
    stderr: () => stderr,
    exited,
    client: (options = {}) => new OpenAI({ baseURL: `${url}/v1`, apiKey: 'none',
                                           maxRetries: 0, ...options }),
    async stop() {
      proc.kill('SIGTERM');
      return exited;
    },
  };
}

/// A greedy chat request for reference prompt `name` (its messages).
export const chats = {
  chat_cruft: [{ role: 'user', content: 'What is cruft?' }],
  chat_system: [{ role: 'system', content: 'Answer in one sentence.' },
                { role: 'user', content: 'Define kludge.' }],
  chat_turns: [{ role: 'user', content: 'What is a hacker?' },
               { role: 'assistant',
                 content: 'A person who enjoys exploring the details of programmable systems.' },
               { role: 'user', content: 'What does "foo" mean?' }],
};
