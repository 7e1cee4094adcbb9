#!/usr/bin/env python3
"""Checks that two cohere2c-run --requests outputs generated the same tokens per request id.

usage: compare_requests.py SERVED.jsonl ALONE.jsonl LABEL [ID=CACHED ...] [--logits SERVED_DIR ALONE_DIR TOL]
ID=CACHED asserts a request's cached_tokens in SERVED ("-": none). Without --logits, every request
generates the same tokens in both. With --logits, the --logits-dir files of both runs: a request's
tokens may differ only where ALONE's top two logits are within 2 TOL * max |ALONE| of each other
(a near tie: both runs are within rounding of the same values, and the two runs batch tokens
differently, so their kernels and GEMM shapes, and with them the rounding, differ), and every row
SERVED has up to the first differing token (from its first_row on) is within TOL * max |ALONE| of
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
for i, cached in expected.items():
    ok = ok and served[i]["cached_tokens"] == int(cached)
worst, ties = 0.0, 0
if not logits:
    ok = ok and same == len(alone)
else:
    import numpy as np
    from safetensors.numpy import load_file
    tol = float(logits[2])
    for i in served:
        s_, a_ = (load_file(f"{d}/{i}.safetensors") for d in logits[:2])
        ours, theirs = served[i]["generated_ids"], alone[i]["generated_ids"]
        # Rows by position: ALONE's row r is position alone_first + r.
        first, alone_first = int(s_["first_row"][0]), int(a_["first_row"][0])
        full = a_["logits"]
        end = alone_first + full.shape[0]  # = P + N - 1
        scale = float(np.abs(full).max())
        prompt = end - len(theirs) + 1
        differ = next((t for t, (x, y) in enumerate(zip(ours, theirs)) if x != y), len(theirs))
        ok = ok and len(ours) == len(theirs) and first >= alone_first
        ok = ok and s_["logits"].shape[0] == end - first
        if differ < len(theirs):  # token `differ` comes from position prompt - 1 + differ
            row = full[prompt - 1 + differ - alone_first]
            top = np.sort(row)[-2:]
            # ALONE's top two are within rounding, and SERVED's token is one
            # of the near-top ones.
            near_tie = (top[1] - top[0] <= 2 * tol * scale and
                        row.max() - row[ours[differ]] <= 2 * tol * scale)
            ok = ok and near_tie
            ties += near_tie
        # Positions [first, prompt + differ): those conditioned on the same tokens.
        rows = max(0, min(prompt + differ, end) - first)
        ref = full[first - alone_first:first - alone_first + rows]
        got = s_["logits"][:rows]
        ok = ok and got.shape == ref.shape
        if got.shape == ref.shape and rows > 0:
            worst = max(worst, float(np.abs(got - ref).max() / scale))
    ok = ok and worst <= tol
cached = {i: served[i]["cached_tokens"] for i in sorted(served)}
print(f"{'PASS' if ok else 'FAIL'} {label}: {same}/{len(alone)} requests generate what they "
      f"generate alone" + (f" ({ties} differ at a near tie)" if ties else "") +
      (f", logits within {worst:.2e} of max |alone|" if logits else "") +
      f"; cached tokens {cached}")
sys.exit(0 if ok else 1)
