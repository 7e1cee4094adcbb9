#!/usr/bin/env python3
"""Checks that two cohere2c-run --requests outputs generated the same tokens per request id.

usage: compare_requests.py SERVED.jsonl ALONE.jsonl LABEL [ID=CACHED ...]
ID=CACHED asserts a request's cached_tokens in SERVED. Prints one line; exits 1 on failure.
"""
import json, sys

served = {r["id"]: r for r in map(json.loads, open(sys.argv[1]))}
alone = {r["id"]: r for r in map(json.loads, open(sys.argv[2]))}
label, expected = sys.argv[3], dict(e.split("=") for e in sys.argv[4:])
ok = served.keys() == alone.keys()
same = sum(served[i]["generated_ids"] == alone[i]["generated_ids"] for i in served if i in alone)
ok = ok and same == len(alone)
for i, cached in expected.items():
    ok = ok and served[i]["cached_tokens"] == int(cached)
cached = {i: served[i]["cached_tokens"] for i in sorted(served)}
print(f"{'PASS' if ok else 'FAIL'} {label}: {same}/{len(alone)} requests generate what they "
      f"generate alone; cached tokens {cached}")
sys.exit(0 if ok else 1)
