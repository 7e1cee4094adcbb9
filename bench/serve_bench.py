#!/usr/bin/env python3
"""cohere2c-serve under load, against cohere2c-run's offline figures.

    serve_bench.py ARTIFACT.so [--serve BIN] [--run BIN] [--concurrency 1,16,64,256]
                   [--prompt-tokens 128] [--new-tokens 128] [--kv-blocks 24000] [--markdown FILE]

ARTIFACT is a cuda artifact compiled from a config alone (Command R7B shapes); both tools bind
seeded random weights. The server gets a tokenizer of the model's vocabulary size (--tokenizer):
the trained model's test tokenizer with its vocab padded by placeholder tokens, since no released
Command R7B tokenizer is at hand; prompts go as token ids, so its merges do not matter.

For each concurrency C, C clients send C * 4 requests (at least 16) in all to /v1/completions
(random prompt ids, ignore_eos, streamed with usage), each client one after another. Measured:
output tokens/s over the whole run, and per request the time to first token (TTFT: request sent
to first streamed token) and the time per output token (TPOT: (last token - first token) /
(tokens - 1)), with percentiles. Offline: cohere2c-run --requests with the same requests,
--max-batch C: output tokens/s and its decode time per token. Standard library only.
"""
import argparse
import http.client
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOKENIZER_SRC = os.path.join(ROOT, "test", "data", "models", "trained-cohere2")


def padded_tokenizer(vocab_size, folder):
    """The trained model's tokenizer files with the vocab padded to vocab_size ids."""
    with open(os.path.join(TOKENIZER_SRC, "tokenizer.json"), encoding="utf-8") as f:
        tok = json.load(f)
    # Hugging Face's tokenizers gives an added token missing from the vocab the next id after the
    # vocab, so once the vocab grows past them the added tokens must sit in it at their own ids.
    for added in tok["added_tokens"]:
        tok["model"]["vocab"].setdefault(added["content"], added["id"])
    taken = set(tok["model"]["vocab"].values())
    for i in range(vocab_size):
        if i not in taken:
            tok["model"]["vocab"][f"<x{i}>"] = i
    with open(os.path.join(folder, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(tok, f)
    for name in ("tokenizer_config.json", "generation_config.json"):
        with open(os.path.join(TOKENIZER_SRC, name), "rb") as src, \
             open(os.path.join(folder, name), "wb") as dst:
            dst.write(src.read())


def start_server(args, artifact, tokenizer, max_batch):
    proc = subprocess.Popen([args.serve, artifact, "--random-weights", "1", "--tokenizer", tokenizer,
                             "--port", "0", "--max-batch", str(max_batch),
                             "--kv-blocks", str(args.kv_blocks)],
                            stderr=subprocess.PIPE, text=True)
    port = None
    for line in proc.stderr:
        sys.stderr.write(line)
        if "listening on" in line:
            port = int(line.split("http://")[1].split()[0].rsplit(":", 1)[1])
        if "ready:" in line:
            break
    threading.Thread(target=lambda: [None for _ in proc.stderr], daemon=True).start()
    return proc, port


def one_request(port, prompt, new_tokens):
    """Streams one completion; (ttft s, tpot s, tokens)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    body = json.dumps({"prompt": prompt, "max_tokens": new_tokens, "ignore_eos": True,
                       "temperature": 0, "stream": True,
                       "stream_options": {"include_usage": True}})
    sent = time.perf_counter()
    conn.request("POST", "/v1/completions", body, {"Content-Type": "application/json"})
    response = conn.getresponse()
    if response.status != 200:
        raise RuntimeError(f"status {response.status}: {response.read()[:300]}")
    first = last = None
    tokens = 0
    for raw in response:
        line = raw.strip()
        if not line.startswith(b"data: ") or line == b"data: [DONE]":
            continue
        event = json.loads(line[6:])
        if event.get("usage"):
            tokens = event["usage"]["completion_tokens"]
        if event["choices"] and event["choices"][0]["text"]:
            last = time.perf_counter()
            first = first or last
    conn.close()
    return first - sent, (last - first) / max(tokens - 1, 1), tokens


def load(port, prompts, concurrency, new_tokens):
    results, lock = [], threading.Lock()
    queue = list(prompts)

    def client():
        while True:
            with lock:
                if not queue:
                    return
                prompt = queue.pop()
            r = one_request(port, prompt, new_tokens)
            with lock:
                results.append(r)

    start = time.perf_counter()
    threads = [threading.Thread(target=client) for _ in range(concurrency)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results, time.perf_counter() - start


def offline(args, artifact, prompts, concurrency, new_tokens, folder):
    path = os.path.join(folder, f"requests-{concurrency}.jsonl")
    with open(path, "w") as f:
        for i, p in enumerate(prompts):
            f.write(json.dumps({"id": str(i), "prompt_ids": p, "max_new_tokens": new_tokens}) + "\n")
    start = time.perf_counter()
    run = subprocess.run([args.run, artifact, "--random-weights", "1", "--requests", path,
                          "--ignore-eos", "--max-batch", str(concurrency),
                          "--kv-blocks", str(args.kv_blocks)],
                         capture_output=True, text=True, check=True)
    # Wall time includes loading the weights; the tool's own decode figures do not.
    stats = run.stderr
    decode = [l for l in stats.splitlines() if l.startswith("prefill:")][0]
    # "prefill: P tokens in A ms; decode: D tokens in B ms (R tokens/s); ..."
    parts = decode.replace(";", "").split()
    prefill_ms, decode_tokens, decode_ms = float(parts[4]), int(parts[7]), float(parts[10])
    total_tokens = len(prompts) * new_tokens
    return {"tok_s": total_tokens / ((prefill_ms + decode_ms) / 1000),
            "decode_ms_per_step": decode_ms / max(decode_tokens / concurrency, 1)}


def percentile(values, p):
    values = sorted(values)
    if not values:
        return float("nan")
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("artifact")
    ap.add_argument("--serve", default=os.path.join(ROOT, "build", "bin", "cohere2c-serve"))
    ap.add_argument("--run", default=os.path.join(ROOT, "build", "bin", "cohere2c-run"))
    ap.add_argument("--concurrency", default="1,16,64,256")
    ap.add_argument("--prompt-tokens", type=int, default=128)
    ap.add_argument("--new-tokens", type=int, default=128)
    ap.add_argument("--vocab", type=int, default=256000)
    ap.add_argument("--kv-blocks", type=int, default=24000,
                    help="blocks in the KV pool (Command R7B: 4 KV groups share it), both tools")
    ap.add_argument("--markdown")
    args = ap.parse_args()
    levels = [int(c) for c in args.concurrency.split(",")]
    rng = random.Random(0)
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        padded_tokenizer(args.vocab, folder)
        proc, port = start_server(args, args.artifact, folder, max(levels))
        try:
            for c in levels:
                prompts = [[rng.randrange(10, args.vocab) for _ in range(args.prompt_tokens)]
                           for _ in range(max(16, 4 * c))]
                results, seconds = load(port, prompts, c, args.new_tokens)
                tokens = sum(r[2] for r in results)
                ttft = [r[0] * 1000 for r in results]
                tpot = [r[1] * 1000 for r in results]
                rows.append({"c": c, "requests": len(results), "tok_s": tokens / seconds,
                             "ttft": ttft, "tpot": tpot, "prompts": prompts})
                print(f"concurrency {c}: {tokens / seconds:.0f} tok/s, TTFT p50 "
                      f"{percentile(ttft, 50):.1f} ms, TPOT p50 {percentile(tpot, 50):.2f} ms",
                      flush=True)
        finally:
            proc.terminate()
            proc.wait(60)
        for row in rows:
            row["offline"] = offline(args, args.artifact, row["prompts"], row["c"],
                                     args.new_tokens, folder)
    lines = ["| concurrency | requests | server tok/s | offline tok/s | TTFT p50 / p90 / p99 ms "
             "| TPOT p50 / p90 / p99 ms | offline decode ms/step |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(
            f"| {r['c']} | {r['requests']} | {r['tok_s']:.0f} | {r['offline']['tok_s']:.0f} | "
            + " / ".join(f"{percentile(r['ttft'], p):.1f}" for p in (50, 90, 99)) + " | "
            + " / ".join(f"{percentile(r['tpot'], p):.2f}" for p in (50, 90, 99)) + " | "
            + f"{r['offline']['decode_ms_per_step']:.2f} |")
    table = "\n".join(lines)
    print(table)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(table + "\n")


if __name__ == "__main__":
    main()
