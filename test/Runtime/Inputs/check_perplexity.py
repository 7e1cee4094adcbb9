#!/usr/bin/env python3
"""Writes the first N sequences of a perplexity.json as cohere2c-run --perplexity lines, or
checks cohere2c-run's answer against the float64 NLLs of the same sequences.

    check_perplexity.py write PERPLEXITY_JSON N OUT.jsonl
    check_perplexity.py check PERPLEXITY_JSON N ANSWER_JSON_LINE_FILE TOLERANCE
    check_perplexity.py excess PERPLEXITY_JSON N ANSWER_JSON_LINE_FILE RATIO
    check_perplexity.py within PERPLEXITY_JSON N ANSWER_JSON_LINE_FILE TOLERANCE

check: each sequence's NLL and the perplexity within TOLERANCE (relative) of the float64 oracle's,
the tokens scored equal; prints "perplexity P (float64 Q)" and exits 1 on a difference.
excess: a quantized engine's perplexity over the float64 oracle's at most RATIO times the float64
FP8-rowwise emulation's excess (nll_fp8), over the same N sequences; prints "excess E (emulation
F, ratio R)" and exits 1 above it.
within: the perplexity alone within TOLERANCE (relative) of the float64 oracle's (a bf16 engine's
check: its single NLLs move more than its perplexity does).
"""
import json
import math
import sys

mode, path, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
with open(path) as f:
    ref = json.load(f)
if mode == "write":
    with open(sys.argv[4], "w") as f:
        for ids in ref["sequences"][:n]:
            f.write(json.dumps({"ids": ids}) + "\n")
    sys.exit(0)
with open(sys.argv[4]) as f:
    answer = json.loads(f.readline())
nll, scored = ref["nll_f64"][:n], ref["tokens_scored"][:n]
want = math.exp(sum(nll) / sum(scored))
if answer["tokens_scored"] != sum(scored) or len(answer["nll"]) != n:
    print(f"MISMATCH: {answer['tokens_scored']} tokens in {len(answer['nll'])} lines, "
          f"want {sum(scored)} in {n}")
    sys.exit(1)
if mode == "excess":
    ratio = float(sys.argv[5])
    emulated = math.exp(sum(ref["nll_fp8"][:n]) / sum(scored)) - want
    excess = answer["perplexity"] - want
    bad = excess > ratio * emulated
    print(f"{'TOO HIGH ' if bad else ''}excess {excess:.4f} (emulation {emulated:.4f}, "
          f"ratio {excess / emulated:.3f}); perplexity {answer['perplexity']:.4f}")
    sys.exit(1 if bad else 0)
tolerance = float(sys.argv[5])
if mode == "within":
    bad = abs(answer["perplexity"] - want) > tolerance * want
    print(f"{'MISMATCH ' if bad else ''}perplexity {answer['perplexity']:.4f} (float64 {want:.4f}, "
          f"relative {(answer['perplexity'] - want) / want:+.2e})")
    sys.exit(1 if bad else 0)
bad = any(abs(a - b) > tolerance * abs(b) for a, b in zip(answer["nll"], nll))
bad |= abs(answer["perplexity"] - want) > tolerance * want
print(f"{'MISMATCH ' if bad else ''}perplexity {answer['perplexity']:.6f} (float64 {want:.6f})")
sys.exit(1 if bad else 0)
