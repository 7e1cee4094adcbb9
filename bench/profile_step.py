#!/usr/bin/env python3
"""Where a step's time goes: every kernel of one decode step and one prefill step, under ncu.

    profile_step.py --artifact DIR/command-r7b-fp8-rowwise.so [--run BIN] [--batch 256]
                    [--prompt 128] [--new 24] [--decode-step 8] [--work DIR] [--csv FILE]

Runs cohere2c-run on BATCH greedy requests of PROMPT random ids and NEW tokens each (seeded
random weights, --max-batch BATCH) under `ncu --metrics gpu__time_duration.sum --clock-control
none` (the kernels at the clocks they run at, one after another: ncu serializes them, so
overlap between the two streams is not seen), or reads an earlier run's --csv. The sample_tokens
kernel ends every step of greedy requests that samples a token (one where every request stops
mid-prompt merges with the next), so the kernels between two of its launches are one step. Prints, as markdown, the kernels of the DECODE-STEP-th step without prefill attention
(a decode step of the whole batch, context about PROMPT + DECODE-STEP) and of the longest step
with it (a prefill step), grouped by kernel family, in ms. Needs ncu on the PATH.
"""
import argparse
import csv
import io
import os
import subprocess
import sys
import tempfile

from random_requests import write_requests

# Generated kernels by name prefix (compiler/Conversion/AttnToGPU); anything else is cuBLASLt's.
FAMILIES = [
    ("attention_prefill", "prefill attention"),
    ("attention_merge", "attention merge"),
    ("attention_sliding", "decode attention, sliding layers"),
    ("attention_full", "decode attention, full layers"),
    ("kv_append", "KV append (+ RoPE)"),
    ("layer_norm", "LayerNorm (+ quantization)"),
    ("swiglu", "SwiGLU (+ quantization)"),
    ("quantize", "quantization"),
    ("residual", "residual sums"),
    ("gemv", "matrix-vector (one-token linear layers)"),
    ("embedding", "embedding"),
    ("gather_rows", "row gathers"),
    ("sample_tokens", "sampled tokens"),
]
GEMM = "GEMMs (cuBLASLt)"


def family(kernel):
    for prefix, name in FAMILIES:
        if kernel.startswith(prefix):
            return name
    return GEMM


def parse_ncu_csv(text):
    """[(kernel name, ms)] in launch order, from `ncu --csv --metrics gpu__time_duration.sum`."""
    start = text.find('"ID"')
    if start < 0:
        sys.exit("profile_step: no ncu CSV in the output (did ncu profile any kernel?)")
    launches = []
    for row in csv.DictReader(io.StringIO(text[start:])):
        if row.get("Metric Name") != "gpu__time_duration.sum":
            continue
        value = float(row["Metric Value"].replace(",", ""))
        unit = row["Metric Unit"]
        # ncu names the unit "ns" or "nsecond" depending on its version.
        scale = {"nsecond": 1e-6, "usecond": 1e-3, "msecond": 1.0, "second": 1e3,
                 "ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}.get(unit)
        if scale is None:
            sys.exit(f"profile_step: unknown time unit {unit!r} in the ncu CSV")
        launches.append((row["Kernel Name"], value * scale))
    return launches


def steps_of(launches):
    """The launches split after each sample_tokens kernel, without the kernels that fill the
    random weights before the first step (they would count as the first step's GEMMs)."""
    steps, current = [], []
    for name, ms in launches:
        if name.startswith("random_uniform"):
            continue
        current.append((name, ms))
        if name.startswith("sample_tokens"):
            steps.append(current)
            current = []
    return steps


def table(step, title):
    totals = {}
    for name, ms in step:
        totals[family(name)] = totals.get(family(name), 0.0) + ms
    lines = [f"{title}: {len(step)} kernels, {sum(ms for _, ms in step):.2f} ms", "",
             "| kernels | ms |", "|---|---|"]
    for name, ms in sorted(totals.items(), key=lambda kv: -kv[1]):
        lines.append(f"| {name} | {ms:.2f} |")
    return "\n".join(lines) + "\n"


def run_ncu(args, work):
    requests = os.path.join(work, "requests.jsonl")
    write_requests(requests, args.batch, args.prompt, args.new, args.vocab, seed=1)
    cmd = ["ncu", "--csv", "--metrics", "gpu__time_duration.sum", "--clock-control", "none",
           args.run, args.artifact, "--random-weights", "1", "--requests", requests,
           "--max-batch", str(args.batch), "--ignore-eos"]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"profile_step: {' '.join(cmd)} failed:\n{out.stderr[-2000:]}")
    return out.stdout


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--artifact", help="the cuda artifact (.so)")
    parser.add_argument("--run", default=os.path.join(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))), "build/bin/cohere2c-run"))
    parser.add_argument("--vocab", type=int, default=256000, help="the model's vocabulary")
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--prompt", type=int, default=128)
    parser.add_argument("--new", type=int, default=24)
    parser.add_argument("--decode-step", type=int, default=8)
    parser.add_argument("--work", help="keep the requests and the CSV here")
    parser.add_argument("--csv", help="read this ncu CSV instead of running ncu")
    args = parser.parse_args()
    if args.csv:
        with open(args.csv) as f:
            text = f.read()
    else:
        if not args.artifact:
            sys.exit("profile_step: --artifact or --csv is needed")
        work = args.work or tempfile.mkdtemp()
        os.makedirs(work, exist_ok=True)
        text = run_ncu(args, work)
        with open(os.path.join(work, "ncu.csv"), "w") as f:
            f.write(text)
    steps = steps_of(parse_ncu_csv(text))
    decode = [s for s in steps if not any(n.startswith("attention_prefill") for n, _ in s)]
    prefill = [s for s in steps if any(n.startswith("attention_prefill") for n, _ in s)]
    if len(decode) < args.decode_step:
        sys.exit(f"profile_step: {len(decode)} decode steps, fewer than --decode-step "
                 f"{args.decode_step}")
    print(table(decode[args.decode_step - 1], f"decode step {args.decode_step}"))
    if prefill:
        longest = max(prefill, key=lambda s: sum(ms for _, ms in s))
        print(table(longest, "the longest prefill step"))


if __name__ == "__main__":
    main()
