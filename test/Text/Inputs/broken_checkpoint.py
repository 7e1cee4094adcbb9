#!/usr/bin/env python3
"""Writes a copy of a checkpoint folder with one text file broken.

    broken_checkpoint.py SRC OUT KIND

The weights and config.json are linked, the text files copied, then one is
changed as KIND says: unknown-model, unknown-pretokenizer, truncated,
unknown-merge, template-syntax, template-tag, empty-tokenizer, bos-token-id
(tokenizer_config.json's bos_token an id, not a string), eos-outside
(generation_config.json's eos_token_id past the vocabulary), deep-tokenizer,
deep-tokenizer-config (a value of 100,000 nested arrays: 200 KB of brackets,
too deep for Python's json module to write, so it is spliced in as text).
"""
import json
import os
import shutil
import sys

src, out, kind = sys.argv[1:4]
os.makedirs(out, exist_ok=True)
for name in os.listdir(src):
    if name.endswith(".safetensors") or name == "config.json":
        if not os.path.exists(f"{out}/{name}"):
            os.symlink(os.path.abspath(f"{src}/{name}"), f"{out}/{name}")
    elif name in ("tokenizer.json", "tokenizer_config.json", "chat_template.jinja",
                  "generation_config.json"):
        shutil.copy(f"{src}/{name}", f"{out}/{name}")

DEEP = "[" * 100_000 + "]" * 100_000


def write_deep(name, document):
    """Writes `document` to OUT/name with its "DEEP" value nested deep."""
    text = json.dumps(document, ensure_ascii=False).replace('"DEEP"', DEEP)
    open(f"{out}/{name}", "w", encoding="utf-8").write(text)


tokenizer = json.load(open(f"{src}/tokenizer.json", encoding="utf-8"))
if kind == "unknown-model":
    tokenizer["model"]["type"] = "WordPiece"
elif kind == "unknown-pretokenizer":
    tokenizer["pre_tokenizer"]["pretokenizers"][1] = {"type": "Metaspace", "replacement": "_"}
elif kind == "unknown-merge":
    tokenizer["model"]["merges"][0] = ["Ġ", "NOT-A-TOKEN"]
if kind in ("unknown-model", "unknown-pretokenizer", "unknown-merge"):
    json.dump(tokenizer, open(f"{out}/tokenizer.json", "w", encoding="utf-8"), ensure_ascii=False)
elif kind == "truncated":
    text = open(f"{src}/tokenizer.json", "rb").read()
    open(f"{out}/tokenizer.json", "wb").write(text[: len(text) // 2])
elif kind == "template-syntax":
    open(f"{out}/chat_template.jinja", "w").write("{{ bos_token }}\n{% if messages %}\nhi\n")
elif kind == "template-tag":
    open(f"{out}/chat_template.jinja", "w").write("{{ bos_token }}\n  {% include 'other.jinja' %}\n")
elif kind == "empty-tokenizer":
    open(f"{out}/tokenizer.json", "w").close()
elif kind == "bos-token-id":
    config = json.load(open(f"{src}/tokenizer_config.json", encoding="utf-8"))
    config["bos_token"] = 5
    json.dump(config, open(f"{out}/tokenizer_config.json", "w", encoding="utf-8"))
elif kind == "eos-outside":
    json.dump({"eos_token_id": [99999]}, open(f"{out}/generation_config.json", "w"))
elif kind == "deep-tokenizer":
    tokenizer["model"]["dropout"] = "DEEP"
    write_deep("tokenizer.json", tokenizer)
elif kind == "deep-tokenizer-config":
    config = json.load(open(f"{src}/tokenizer_config.json", encoding="utf-8"))
    config["chat_template"] = "DEEP"
    write_deep("tokenizer_config.json", config)
else:
    sys.exit(f"unknown kind {kind}")
