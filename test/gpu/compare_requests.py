#!/usr/bin/env python3
"""Checks that two cohere2c-run --requests outputs generated the same tokens per request id.

usage: compare_requests.py SERVED.jsonl ALONE.jsonl LABEL [ID=CACHED ...] [--logits SERVED_DIR ALONE_DIR TOL]
ID=CACHED asserts a request's cached_tokens in SERVED ("-": none). With --logits, the --logits-dir
files of both runs: every row SERVED has (from its first_row on) within TOL * max |ALONE| of
ALONE's row. Prints one line; exits 1 on failure.
"""
import json, sys

args = sys.argv[1:]
logits = None
if "--logits" in args:
    i = args.index("--logits")
    logits, args = args[i + 1:i + 4], args[:i]
served = {r["id"]: r for r in map(json.loads, open(args[0]))}
alone = {r["id"]: r for r in map(json.loads, open(args[1]))}
label, expected = args[2], dict(e.split("=") for e in args[3:] if e != "-")
ok = served.keys() == alone.keys()
same = sum(served[i]["generated_ids"] == alone[i]["generated_ids"] for i in served if i in alone)
ok = ok and same == len(alone)
for i, cached in expected.items():
    ok = ok and served[i]["cached_tokens"] == int(cached)
worst = 0.0
if logits:
    import numpy as np
    from safetensors.numpy import load_file
    for i in served:
        s_, a_ = (load_file(f"{d}/{i}.safetensors") for d in logits[:2])
        first = int(s_["first_row"][0])
        ref = a_["logits"][first:]
        ok = ok and s_["logits"].shape == ref.shape
        if s_["logits"].shape == ref.shape:
            worst = max(worst, float(np.abs(s_["logits"] - ref).max() / np.abs(ref).max()))
    ok = ok and worst <= float(logits[2])
cached = {i: served[i]["cached_tokens"] for i in sorted(served)}
print(f"{'PASS' if ok else 'FAIL'} {label}: {same}/{len(alone)} requests generate what they "
      f"generate alone" + (f", logits within {worst:.2e} of max |alone|" if logits else "") +
      f"; cached tokens {cached}")
sys.exit(0 if ok else 1)
