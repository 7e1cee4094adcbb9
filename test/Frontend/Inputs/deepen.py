#!/usr/bin/env python3
"""Writes a copy of a JSON text with its "DEEP" placeholders nested deep.

    deepen.py IN OUT [--depth N] [--safetensors]

Each "DEEP" (quotes included) becomes N arrays nested in one another
(default 100,000: 200 KB of brackets). With --safetensors, OUT is a
safetensors file whose header is the result and whose data section is
empty.
"""
import argparse
import os
import struct

parser = argparse.ArgumentParser()
parser.add_argument("input")
parser.add_argument("output")
parser.add_argument("--depth", type=int, default=100_000)
parser.add_argument("--safetensors", action="store_true")
args = parser.parse_args()

text = open(args.input, encoding="utf-8").read()
text = text.replace('"DEEP"', "[" * args.depth + "]" * args.depth)
data = text.encode("utf-8")
if args.safetensors:
    data = struct.pack("<Q", len(data)) + data
os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
open(args.output, "wb").write(data)
