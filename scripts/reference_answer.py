#!/usr/bin/env python3
"""Prints a reference model's greedy answer as a chat client shows it.

    reference_answer.py MODEL_DIR NAME

MODEL_DIR/reference.json's texts[NAME] is the decoded greedy continuation,
special tokens included; the answer is that text up to the end of the turn
(the first EOS token, tokenizer_config.json's eos_token) with the special
tokens (tokenizer.json's added tokens marked special) removed.
"""
import json
import sys

model, name = sys.argv[1], sys.argv[2]
text = json.load(open(f"{model}/reference.json", encoding="utf-8"))["texts"][name]
eos = json.load(open(f"{model}/tokenizer_config.json", encoding="utf-8"))["eos_token"]
text = text.split(eos)[0]
for token in json.load(open(f"{model}/tokenizer.json", encoding="utf-8"))["added_tokens"]:
    if token["special"]:
        text = text.replace(token["content"], "")
print(text)
