#!/usr/bin/env python3
"""Checks cohere2c-run's answers to reference_requests.py's requests.

    check_answers.py MODEL_DIR RESULTS.jsonl

Each result's generated_ids must equal reference.json's greedy tokens of
its prompt and its text the reference's text with the special tokens
(tokenizer.json's added tokens marked special) removed. Prints a line per
prompt; exits 1 on any difference or missing prompt.
"""
import json
import sys

model, results_path = sys.argv[1], sys.argv[2]
reference = json.load(open(f"{model}/reference.json", encoding="utf-8"))
specials = [t["content"] for t in json.load(open(f"{model}/tokenizer.json", encoding="utf-8"))
            ["added_tokens"] if t["special"]]
results = {r["id"]: r for r in map(json.loads, open(results_path, encoding="utf-8"))}
ok = True
for name, greedy in reference["greedy"].items():
    text = reference["texts"][name]
    for s in specials:
        text = text.replace(s, "")
    r = results.get(name)
    same = r is not None and r["generated_ids"] == greedy and r["text"] == text
    ok &= same
    print(f"{name}: {'same' if same else 'DIFFERENT'} tokens and text")
    if not same and r is not None:
        print(f"  expected {greedy} {text!r}\n  found    {r['generated_ids']} {r['text']!r}")
sys.exit(0 if ok else 1)
