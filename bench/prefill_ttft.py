#!/usr/bin/env python3
"""Time to the first token of one prompt of N tokens, alone on the GPU.

    prefill_ttft.py ARTIFACT [--run BIN] [--tokens 2048] [--requests 6] [--config CONFIG]

Queues REQUESTS prompts of TOKENS random ids, each asking for one token, at --max-batch 1
(cohere2c-run --requests, seeded random weights): the engine serves them one after another, so
request i's TTFT minus request i-1's is the prefill of one prompt (with its one greedy token),
without the first request's warm-up (cuBLASLt's choices, CUDA graphs, clocks). Prints each
difference and their median in ms, and exits non-zero if cohere2c-run fails.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

from random_requests import write_requests

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("artifact")
    ap.add_argument("--run", default=os.path.join(ROOT, "build", "bin", "cohere2c-run"))
    ap.add_argument("--tokens", type=int, default=2048)
    ap.add_argument("--requests", type=int, default=6)
    ap.add_argument("--config", default=os.path.join(ROOT, "test", "data", "configs",
                                                     "command-r7b.config.json"))
    args = ap.parse_args()
    if args.requests < 2:
        sys.exit("prefill_ttft: --requests must be at least 2 (differences of TTFTs)")
    with open(args.config) as f:
        vocab = json.load(f)["vocab_size"]
    with tempfile.TemporaryDirectory() as work:
        requests = os.path.join(work, "requests.jsonl")
        write_requests(requests, args.requests, args.tokens, 1, vocab)
        cmd = [args.run, args.artifact, "--random-weights", "1", "--requests", requests,
               "--max-batch", "1"]
        out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"prefill_ttft: {' '.join(cmd)} failed:\n{out.stderr[-2000:]}")
    ttft = sorted(json.loads(l)["ttft_ms"] for l in out.stdout.splitlines() if l.startswith("{"))
    diffs = [b - a for a, b in zip(ttft, ttft[1:])]
    print(json.dumps({"artifact": os.path.basename(args.artifact), "tokens": args.tokens,
                      "prefill_ms": [round(d, 2) for d in diffs],
                      "median_ms": round(statistics.median(diffs), 2)}))


if __name__ == "__main__":
    main()
