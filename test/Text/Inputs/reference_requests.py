#!/usr/bin/env python3
"""Writes cohere2c-run requests for the prompts of a model's reference.json.

    reference_requests.py MODEL_DIR > requests.jsonl

The trained model's reference prompts are three rendered chats (written
here as the messages that render to them) and one text (`text_200`, given
as the text its ids decode to, through GPT-2's byte-to-unicode map, so that
the tokenizer must find the ids again). Each request asks for as many
tokens as the reference generated.
"""
import json
import sys

CHATS = {
    "chat_cruft": [{"role": "user", "content": "What is cruft?"}],
    "chat_system": [{"role": "system", "content": "Answer in one sentence."},
                    {"role": "user", "content": "Define kludge."}],
    "chat_turns": [{"role": "user", "content": "What is a hacker?"},
                   {"role": "assistant",
                    "content": "A person who enjoys exploring the details of programmable systems."},
                   {"role": "user", "content": 'What does "foo" mean?'}],
}


def byte_decoder():
    """GPT-2's map from the printable characters of byte-level BPE to bytes."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {chr(c): b for b, c in zip(bs, cs)}


def main():
    model = sys.argv[1]
    reference = json.load(open(f"{model}/reference.json", encoding="utf-8"))
    tokenizer = json.load(open(f"{model}/tokenizer.json", encoding="utf-8"))
    vocab = {i: t for t, i in tokenizer["model"]["vocab"].items()}
    special = {t["id"] for t in tokenizer["added_tokens"] if t["special"]}
    to_byte = byte_decoder()
    for name, ids in reference["prompts"].items():
        request = {"id": name, "max_new_tokens": len(reference["greedy"][name])}
        if name in CHATS:
            request["messages"] = CHATS[name]
        else:
            pieces = "".join(vocab[i] for i in ids if i not in special)
            request["prompt"] = bytes(to_byte[c] for c in pieces).decode("utf-8")
        print(json.dumps(request, ensure_ascii=False))


if __name__ == "__main__":
    main()
