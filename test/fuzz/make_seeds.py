#!/usr/bin/env python3
"""Writes the seed inputs of test/fuzz/corpus/<target>/ (seed-*) from the
test data: small valid inputs of each parser and a few near misses. Inputs
a fuzzer crashed on are added by hand, named after what they exercise, and
never rewritten here.

    test/fuzz/make_seeds.py [MANIFEST_JSON...]

MANIFEST_JSON: manifests of compiled artifacts (the `cohere2c_manifest`
bytes of OUT.so), written as manifest seeds.
"""
import json
import os
import struct
import sys

here = os.path.dirname(os.path.abspath(__file__))
data = os.path.join(here, "..", "data")
trained = os.path.join(data, "models", "trained-cohere2")


def write(target, name, content):
    folder = os.path.join(here, "corpus", target)
    os.makedirs(folder, exist_ok=True)
    mode = "wb" if isinstance(content, bytes) else "w"
    with open(os.path.join(folder, "seed-" + name), mode) as f:
        f.write(content)


def safetensors(tensors, metadata=None, pad=True):
    header, blob = {}, b""
    if metadata is not None:
        header["__metadata__"] = metadata
    for name, dtype, shape, raw in tensors:
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [len(blob), len(blob) + len(raw)]}
        blob += raw
    text = json.dumps(header, separators=(",", ":")).encode()
    if pad:
        text += b" " * ((8 - len(text) % 8) % 8)
    return struct.pack("<Q", len(text)) + text + blob


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


# config.json
for name in ["command-r7b.config.json", "command-a.config.json"]:
    write("config", name, read(os.path.join(data, "configs", name)))
for model in ["tiny-cohere2", "trained-cohere2"]:
    write("config", model + ".json",
          read(os.path.join(data, "models", model, "config.json")))

# safetensors files
f32 = struct.pack("<4f", 1, 2, 3, 4)
write("safetensors", "two.safetensors",
      safetensors([("a", "F32", [2, 2], f32), ("b", "BF16", [2], b"\x80\x3f\x00\x40")]))
write("safetensors", "metadata.safetensors",
      safetensors([("w", "F8_E4M3", [4], b"\x38\x40\x7f\xff")], {"format": "pt"}))
write("safetensors", "empty.safetensors", safetensors([]))
write("safetensors", "scalar.safetensors", safetensors([("s", "F64", [], struct.pack("<d", 1.5))]))
write("safetensors", "overlap.safetensors",
      struct.pack("<Q", 96) + json.dumps(
          {"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
           "b": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}).encode().ljust(96) + f32[:4])

# shard indexes (ShardIndexFuzz's shard holds a [2] and b [1, 3])
shard = "model-00001-of-00001.safetensors"
write("shard-index", "both.json", json.dumps(
    {"metadata": {"total_size": 20}, "weight_map": {"a": shard, "b": shard}}))
write("shard-index", "one.json", json.dumps({"weight_map": {"a": shard}}))
write("shard-index", "missing-shard.json", json.dumps({"weight_map": {"a": "model-00002.safetensors"}}))
write("shard-index", "missing-tensor.json", json.dumps({"weight_map": {"c": shard}}))

# OUT.weights headers: magic, version 1, the id, the data size
header = bytearray(4096)
header[0:16] = b"COHERE2CWEIGHTS\0"
header[16:20] = struct.pack("<I", 1)
header[24:40] = bytes.fromhex("0123456789abcdef0123456789abcdef")
header[40:48] = struct.pack("<Q", 4985344)
write("weights-header", "match.bin", bytes(header))
header[24] ^= 1
write("weights-header", "other-id.bin", bytes(header))
write("weights-header", "short.bin", bytes(header[:64]))

# manifests
for path in sys.argv[1:]:
    write("manifest", os.path.basename(path), open(path, "rb").read().rstrip(b"\0"))

# cohere2c-run --requests and --perplexity lines
write("requests", "ids.jsonl",
      '{"id": "X", "prompt_ids": [5, 17, 33], "max_new_tokens": 2}\n'
      '{"prompt_ids": [5], "temperature": 0.7, "top_k": 5, "top_p": 0.9, "seed": 3, '
      '"logits_from": 1}\n\n')
write("requests", "text.jsonl", '{"prompt": "Hello"}\n{"messages": [{"role": "user", "content": "Hi"}]}\n')
write("requests", "perplexity.jsonl", '{"ids": [5, 17, 33, 40]}\n{"ids": [1, 2]}\n')

# tokenizer.json: the trained tokenizer with its first 300 tokens
tokenizer = json.loads(read(os.path.join(trained, "tokenizer.json")))
vocab = {t: i for t, i in tokenizer["model"]["vocab"].items() if i < 300}
tokenizer["model"]["vocab"] = vocab
tokenizer["model"]["merges"] = [m for m in tokenizer["model"]["merges"]
                                if all(p in vocab for p in m) and "".join(m) in vocab]
tokenizer["added_tokens"] = [t for t in tokenizer["added_tokens"] if t["id"] < 300]
write("tokenizer-json", "small.json", json.dumps(tokenizer, ensure_ascii=False))

# text to tokenize
cases = json.loads(read(os.path.join(trained, "tokenizer_cases.json")))
texts = [c["text"] for c in cases if isinstance(c, dict) and "text" in c][:12]
for i, text in enumerate(texts):
    write("tokenize-text", "case-%d.txt" % i, text)
write("tokenize-text", "special.txt", "<BOS_TOKEN><|START_OF_TURN_TOKEN|>Hi 123  \n\t\u00e9")

# chat templates
write("chat-template", "trained.jinja", read(os.path.join(trained, "chat_template.jinja")))
templates = os.path.join(here, "..", "unit", "chat_template", "templates")
for name in sorted(os.listdir(templates)):
    write("chat-template", name, read(os.path.join(templates, name)))

# HTTP bodies
write("http-request", "chat.json", json.dumps(
    {"model": "m", "messages": [{"role": "user", "content": "What is cruft?"}],
     "max_tokens": 8, "temperature": 0.5, "top_p": 0.9, "seed": 1, "stop": ["\n"],
     "stream": True, "stream_options": {"include_usage": True}, "logprobs": True,
     "top_logprobs": 2}))
write("http-request", "chat-tools.json", json.dumps(
    {"messages": [{"role": "system", "content": "S"}, {"role": "user", "content": "Q"}],
     "documents": [{"text": "D"}],
     "tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}]}))
write("http-request", "completion.json", json.dumps(
    {"prompt": "In the beginning", "max_tokens": 4, "n": 1, "top_k": 3, "ignore_eos": True}))
write("http-request", "completion-ids.json", json.dumps({"prompt": [[5, 17, 33], [5]], "logprobs": 1}))
