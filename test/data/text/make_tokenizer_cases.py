#!/usr/bin/env python3
"""Oracle cases for the tokenizer: Hugging Face `tokenizers` on generated text.

    python3 make_tokenizer_cases.py TOKENIZER_JSON OUT_JSON [--seed 0]

Needs the `tokenizers` package (not on the build machine: run it where it is
installed and keep the output as test data). Writes

    {"tokenizer": "<file name>", "tokenizers_version": ...,
     "encode": [{"kind", "text", "ids", "ids_no_special", "decoded",
                 "decoded_skip_special"}],
     "decode": [{"ids", "decoded", "decoded_skip_special"}]}

`encode` holds strings of many kinds (random Unicode from many scripts,
decomposed characters that NFC composes, whitespace runs, digits of several
scripts, added tokens inside and around text, contractions, English text);
`decode` holds random id sequences, which often split a UTF-8 character
across ids or end inside one (decoded lossily, U+FFFD).
"""
import argparse
import json
import random

from tokenizers import Tokenizer, __version__ as tokenizers_version

# Code point ranges to draw from: letters, marks, digits, symbols and spaces
# of many scripts, and the surrogate-free planes beyond the BMP.
RANGES = [
    (0x20, 0x7E), (0xA0, 0xFF), (0x100, 0x24F), (0x300, 0x36F), (0x370, 0x3FF),
    (0x400, 0x4FF), (0x590, 0x5FF), (0x600, 0x6FF), (0x660, 0x669), (0x900, 0x97F),
    (0xE00, 0xE7F), (0x1100, 0x11FF), (0x2000, 0x206F), (0x2070, 0x209F),
    (0x2150, 0x218F), (0x2460, 0x24FF), (0x3000, 0x303F), (0x3040, 0x30FF),
    (0x4E00, 0x4FFF), (0xAC00, 0xAD00), (0xFF00, 0xFFEF), (0x1F300, 0x1F6FF),
    (0x1D400, 0x1D7FF), (0x10000, 0x1007F), (0xE000, 0xE0FF),
]
WHITESPACE = [" ", "  ", "\t", "\n", "\r\n", "\r", "\u00a0", "\u3000", "\u2009",
              "\u200b", "\u0085", "\u2028", "\x0b", "\x0c", "\u1680"]
DIGITS = "0123456789\u0660\u0661\u0662\u06f5\u0966\u0967\uff11\uff12\u00b2\u00b3\u00bd\u2153\u2160\u2161\u2460\U0001d7ce"
DECOMPOSED = ["e\u0301", "a\u0308", "o\u0302\u0323", "A\u030a", "\u1100\u1161\u11a8",
              "n\u0303", "\u212b", "\u2126", "K\u0301", "\u0041\u0327\u0306", "c\u0327",
              "\u03b1\u0301", "\u0418\u0306", "\u00c5", "\u1e9b\u0323", "\ufb01"]
ENGLISH = [
    "In the beginning God created the heavens and the earth.",
    "The Jargon File is a glossary of hacker slang.",
    "CYNIC, n. A blackguard whose faulty vision sees things as they are.",
    "def f(x):\n    return x ** 2  # square\n",
    "print('Hello,   world!')\n\n\n",
    "It's 3:45pm; we'll meet at 221B Baker St. (don't be late!)",
    "e-mail: someone@example.com, URL: https://example.org/a?b=c&d=1",
    "    indented\twith\ttabs and trailing spaces   ",
    "I'M SHOUTING 'S 'T 'RE 'VE 'M 'LL 'D and I'm not",
]


def random_text(rng, length):
    out = []
    for _ in range(length):
        lo, hi = rng.choice(RANGES)
        out.append(chr(rng.randint(lo, hi)))
    return "".join(out)


def mixed(rng, added):
    pieces = []
    for _ in range(rng.randint(1, 12)):
        kind = rng.random()
        if kind < 0.25:
            pieces.append(rng.choice(WHITESPACE) * rng.randint(1, 4))
        elif kind < 0.4:
            pieces.append("".join(rng.choice(DIGITS) for _ in range(rng.randint(1, 6))))
        elif kind < 0.5:
            pieces.append(rng.choice(DECOMPOSED))
        elif kind < 0.6:
            pieces.append(rng.choice(added))
        elif kind < 0.8:
            pieces.append(rng.choice(ENGLISH)[: rng.randint(1, 40)])
        else:
            pieces.append(random_text(rng, rng.randint(1, 8)))
    return "".join(pieces)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("tokenizer_json")
    ap.add_argument("out_json")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    tok = Tokenizer.from_file(args.tokenizer_json)
    rng = random.Random(args.seed)
    added = [t.content for t in tok.get_added_tokens_decoder().values()]
    partial = [a[: len(a) // 2] for a in added[:6]]

    texts = []
    texts += [("english", t) for t in ENGLISH]
    texts += [("random", random_text(rng, rng.randint(1, 40))) for _ in range(80)]
    texts += [("whitespace", "".join(rng.choice(WHITESPACE + ["a", "b "]) for _ in range(rng.randint(1, 16))))
              for _ in range(40)]
    texts += [("digits", "".join(rng.choice(DIGITS + " .,x") for _ in range(rng.randint(1, 24))))
              for _ in range(30)]
    texts += [("nfc", "".join(rng.choice(DECOMPOSED + ["x", " "]) for _ in range(rng.randint(1, 8))))
              for _ in range(30)]
    texts += [("added", "".join(rng.choice(added + partial + [" ", "  ", "\n", "hi", "x y"])
                                for _ in range(rng.randint(1, 8)))) for _ in range(50)]
    texts += [("mixed", mixed(rng, added)) for _ in range(80)]
    texts += [("edge", t) for t in ["", " ", "\n", "<", "<|", "'", "'s", " 's", "\u00a0\u00a0x",
                                    "x\u0301", "\U0001f600\U0001f600", "a" * 300, " " * 50 + "x"]]

    encode = []
    for kind, text in texts:
        with_special = tok.encode(text, add_special_tokens=True).ids
        no_special = tok.encode(text, add_special_tokens=False).ids
        encode.append({
            "kind": kind, "text": text, "ids": with_special, "ids_no_special": no_special,
            "decoded": tok.decode(with_special, skip_special_tokens=False),
            "decoded_skip_special": tok.decode(with_special, skip_special_tokens=True),
        })

    vocab = tok.get_vocab_size(with_added_tokens=True)
    decode = []
    for _ in range(60):
        ids = [rng.randrange(vocab) for _ in range(rng.randint(1, 12))]
        decode.append({"ids": ids,
                       "decoded": tok.decode(ids, skip_special_tokens=False),
                       "decoded_skip_special": tok.decode(ids, skip_special_tokens=True)})

    with open(args.out_json, "w", encoding="utf-8") as f:
        json.dump({"tokenizer": args.tokenizer_json.split("/")[-1],
                   "tokenizers_version": tokenizers_version,
                   "encode": encode, "decode": decode}, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print(f"{len(encode)} encode cases, {len(decode)} decode cases -> {args.out_json}")


if __name__ == "__main__":
    main()
