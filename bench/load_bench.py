#!/usr/bin/env python3
"""Loading weights, and Command A on one GPU.

On a machine with one NVIDIA H200 (builds nothing there):
  command-a   Command A fp8-rowwise (test/data/configs/command-a.config.json), random weights
              generated on the device: time to ready and the host's maximum resident set of each
              run; decode at batch 1, 8 and 32 (prompts of 512 tokens, 128 generated each);
              prefill of one 2048- and one 8192-token prompt.
  r7b         the streaming loader on Command R7B checkpoints: the bf16 one bench/bench.py
              checkpoint writes and its FP8-rowwise export, bound at load (--checkpoint) by the
              bf16 and fp8-rowwise artifacts: time to ready, maximum resident set, bytes/s.
Each run is one cohere2c-run; its stderr gives the figures ("ready:", "prefill:", "decode:").

  load_bench.py --run build/bin/cohere2c-run --artifacts build/gpu-artifacts --work DIR
                [--steps command-a,r7b] [--markdown FILE]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

from random_requests import write_requests

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def run(cmd, log):
    """Runs cmd; returns (exit status, wall seconds, max RSS in GiB, stderr)."""
    start = time.monotonic()
    with open(log, "w") as err:
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(p.pid, 0)
    wall = time.monotonic() - start
    text = open(log).read()
    return os.waitstatus_to_exitcode(status), wall, usage.ru_maxrss / 2**20, text


def figures(stderr):
    out = {}
    if m := re.search(r"ready: ([0-9.]+) s", stderr):
        out["ready_s"] = float(m.group(1))
    if m := re.search(r"prefill: (\d+) tokens in ([0-9.]+) ms; decode: (\d+) tokens in ([0-9.]+) ms", stderr):
        out["prefill_tokens"], out["prefill_ms"] = int(m.group(1)), float(m.group(2))
        out["decode_tokens"], out["decode_ms"] = int(m.group(3)), float(m.group(4))
    if m := re.search(r"device: [^;]*; (.*)", stderr):
        out["memory"] = m.group(1)
    return out


def command_a(args, rows):
    artifact = os.path.join(args.artifacts, "command-a-fp8-rowwise.so")
    vocab = json.load(open(os.path.join(ROOT, "test/data/configs/command-a.config.json")))["vocab_size"]
    cases = [("decode, batch 1", 1, 512, 128), ("decode, batch 8", 8, 512, 128),
             ("decode, batch 32", 32, 512, 128), ("prefill 2048", 1, 2048, 1),
             ("prefill 8192", 1, 8192, 1)]
    for name, batch, prompt, new in cases:
        reqs = os.path.join(args.work, f"command-a-{batch}-{prompt}.jsonl")
        write_requests(reqs, batch, prompt, new, vocab)
        log = os.path.join(args.work, f"command-a-{batch}-{prompt}.err")
        status, wall, rss, err = run([args.run, artifact, "--random-weights", "1", "--requests", reqs,
                                      "--max-batch", str(batch), "--ignore-eos"], log)
        f = figures(err)
        print(f"Command A fp8-rowwise, {name}: exit {status}, {wall:.1f} s, max RSS {rss:.2f} GiB, {f}")
        if status:
            print(err[-2000:])
        rate = (f"{f['decode_tokens'] * 1000 / f['decode_ms']:.1f} tokens/s" if new > 1 and f.get("decode_ms")
                else f"{f['prefill_ms']:.1f} ms" if f.get("prefill_ms") else "-")
        rows.append(["Command A fp8-rowwise, random weights", name, f"{f.get('ready_s', float('nan')):.1f}",
                     f"{rss:.2f}", rate])
        if batch == 1 and prompt == 512:
            print("memory:", f.get("memory", "?"))


def du(path):
    return sum(os.path.getsize(os.path.join(d, n)) for d, _, names in os.walk(path) for n in names)


def r7b(args, rows):
    vocab = 256000
    reqs = os.path.join(args.work, "r7b-load.jsonl")
    write_requests(reqs, 1, 16, 8, vocab)
    for precision, checkpoint in (("bf16", "checkpoint"), ("fp8-rowwise", "checkpoint-fp8")):
        ckpt = os.path.join(args.work, checkpoint)
        artifact = os.path.join(args.artifacts, f"command-r7b-{precision}.so")
        log = os.path.join(args.work, f"r7b-load-{precision}.err")
        status, wall, rss, err = run([args.run, artifact, "--checkpoint", ckpt, "--requests", reqs,
                                      "--ignore-eos"], log)
        f = figures(err)
        size = du(ckpt)
        ready = f.get("ready_s", float("nan"))
        print(f"Command R7B {precision} from {checkpoint} ({size / 1e9:.1f} GB): exit {status}, "
              f"ready {ready:.1f} s ({size / 1e9 / ready:.1f} GB/s), max RSS {rss:.2f} GiB")
        if status:
            print(err[-2000:])
        rows.append([f"Command R7B {precision}, {checkpoint} ({size / 1e9:.1f} GB)", "load", f"{ready:.1f}",
                     f"{rss:.2f}", f"{size / 1e9 / ready:.1f} GB/s"])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--run", default=os.path.join(ROOT, "build/bin/cohere2c-run"))
    ap.add_argument("--artifacts", default=os.path.join(ROOT, "build/gpu-artifacts"))
    ap.add_argument("--work", required=True)
    ap.add_argument("--steps", default="command-a,r7b")
    ap.add_argument("--markdown")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    rows = []
    steps = args.steps.split(",")
    if "command-a" in steps:
        command_a(args, rows)
    if "r7b" in steps:
        r7b(args, rows)
    table = ["| run | case | ready (s) | max RSS (GiB) | figure |", "|---|---|---|---|---|"]
    table += ["| " + " | ".join(r) + " |" for r in rows]
    print("\n".join(table))
    if args.markdown:
        open(args.markdown, "w").write("\n".join(table) + "\n")


if __name__ == "__main__":
    sys.exit(main())
