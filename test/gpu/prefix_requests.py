#!/usr/bin/env python3
"""Writes the prefix-reuse request files of the project's KV-cache checks.

usage: prefix_requests.py MODEL_DIR OUT_DIR
  seed.jsonl:    X (the 40-token reference prompt, 40 new tokens), then Y sharing X's first 30
                 tokens and diverging (10 more tokens, 24 new): with block size 4 and window 8,
                 Y must be served 28 cached tokens.
  short.jsonl:   X, then Y sharing 6 tokens (fewer than the window): 4 cached (block size 4).
  boundary.jsonl: X, then Y sharing exactly 32 tokens (a block boundary): 32 cached.
  sixteen.jsonl: 16 requests sharing prefixes of two reference prompts (as in
                 test/unit/runtime/PrefixReuseTest.cpp).
With block size 3 (not dividing the window), seed.jsonl's Y is served 30 cached tokens.
"""
import json, sys

model, out = sys.argv[1:3]
ref = json.load(open(f"{model}/reference.json"))
a, b = ref["prompts"]["len40"], ref["prompts"]["len100"]


def diverge(base, n, extra):
    tail = []
    for i in range(extra):
        t = 100 + (7 * i + n) % 300
        if n + i < len(base) and base[n + i] == t:
            t += 1
        tail.append(t)
    return base[:n] + tail


with open(f"{out}/seed.jsonl", "w") as f:
    f.write(json.dumps({"id": "X", "prompt_ids": a, "max_new_tokens": 40}) + "\n")
    f.write(json.dumps({"id": "Y", "prompt_ids": diverge(a, 30, 10), "max_new_tokens": 24}) + "\n")
for name, shared, extra, x_new in (("short", 6, 20, 8), ("boundary", 32, 9, 16)):
    with open(f"{out}/{name}.jsonl", "w") as f:
        f.write(json.dumps({"id": "X", "prompt_ids": a, "max_new_tokens": x_new}) + "\n")
        f.write(json.dumps({"id": "Y", "prompt_ids": diverge(a, shared, extra), "max_new_tokens": 8}) + "\n")
with open(f"{out}/sixteen.jsonl", "w") as f:
    for i in range(16):
        base = b if i % 2 else a
        f.write(json.dumps({"id": f"r{i}", "prompt_ids": diverge(base, 9 + (i * 5) % 30, 3 + i % 5),
                            "max_new_tokens": 6 + i % 7}) + "\n")
