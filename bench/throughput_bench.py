#!/usr/bin/env python3
"""Offline serving throughput, in the style of trtllm-bench's throughput mode.

    throughput_bench.py --artifacts DIR [--run BIN] [--config CONFIG] [--precisions bf16,fp8-rowwise]
                        [--cases 128/128:256,512;2048/128:256] [--requests 1024]
                        [--temperature T] [--hf-checkpoint DIR --hf-batches 64,128,256]
                        [--work DIR] [--markdown FILE] [--plot FILE.png] [--commit TEXT]

Every request of a case is queued at once (cohere2c-run --requests: ISL random prompt ids, OSL
generated tokens, --ignore-eos, greedy or sampled at --temperature (request i with seed i),
seeded random weights of DIR/command-r7b-PRECISION.so's
shapes), and the engine serves them under --max-batch B with its default step token budget and
the KV cache the device memory plan leaves (--kv-blocks 0). A case is ISL/OSL:B1,B2,... .
Measured per run, from cohere2c-run's per-request lines (times from the moment all requests are
queued): output tokens/s = output tokens / the last request's end; total tokens/s likewise with
the prompts counted; TTFT = ttft_ms; TPOT = (total_ms - ttft_ms) / (OSL - 1); percentiles over
the requests. With --hf-checkpoint, Hugging Face transformers (bf16, sdpa, greedy generate)
runs the 128/128 case batch by batch at each of --hf-batches (fewer requests: its rate is
steady from the first batch) and reports its best.

Writes runs.tsv into --work, the table into --markdown and, with --plot, throughput against
max-batch and TPOT against max-batch as one PNG (matplotlib). Standard library otherwise.
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

from random_requests import random_prompt, write_requests

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def parse_cases(text):
    """'128/128:256,512;2048/128:256' -> [(128, 128, [256, 512]), (2048, 128, [256])]."""
    cases = []
    for part in text.split(";"):
        lengths, batches = part.split(":")
        isl, osl = (int(x) for x in lengths.split("/"))
        cases.append((isl, osl, [int(b) for b in batches.split(",")]))
    return cases


def vocab_of(config):
    with open(config) as f:
        return json.load(f)["vocab_size"]


def percentile(values, q):
    s = sorted(values)
    return s[min(len(s) - 1, int(round(q / 100 * (len(s) - 1))))]


def run_cohere2c(artifact, requests, isl, osl, batch, log):
    cmd = [ARGS.run, artifact, "--random-weights", "1", "--requests", requests,
           "--max-batch", str(batch), "--ignore-eos", "--kv-blocks", "0"]
    start = time.time()
    out = subprocess.run(cmd, capture_output=True, text=True)
    with open(log, "w") as f:
        f.write(" ".join(cmd) + "\n" + out.stderr)
    if out.returncode != 0:
        sys.exit(f"throughput_bench: {' '.join(cmd)} failed:\n{out.stderr[-2000:]}")
    lines = [json.loads(l) for l in out.stdout.splitlines() if l.startswith("{")]
    return summarize(lines, isl, osl, time.time() - start)


def summarize(lines, isl, osl, wall_s):
    makespan = max(r["total_ms"] for r in lines) / 1000
    out_tokens = sum(len(r["generated_ids"]) for r in lines)
    if out_tokens != len(lines) * osl:
        sys.exit(f"throughput_bench: {out_tokens} tokens generated, {len(lines) * osl} asked")
    ttft = [r["ttft_ms"] for r in lines]
    tpot = [(r["total_ms"] - r["ttft_ms"]) / (osl - 1) for r in lines] if osl > 1 else [0.0]
    return {"requests": len(lines), "out_tok_s": out_tokens / makespan,
            "total_tok_s": (out_tokens + len(lines) * isl) / makespan, "makespan_s": makespan,
            "wall_s": wall_s,
            **{f"ttft_p{q}": percentile(ttft, q) for q in (50, 90, 99)},
            **{f"tpot_p{q}": percentile(tpot, q) for q in (50, 90, 99)}}


def run_hf(isl, osl, batches):
    """Hugging Face's best batch on the 128/128 case: (batch, output tokens/s) for each."""
    import torch
    from transformers import AutoModelForCausalLM
    model = AutoModelForCausalLM.from_pretrained(ARGS.hf_checkpoint, dtype=torch.bfloat16,
                                                 attn_implementation="sdpa").cuda().eval()
    vocab = model.config.vocab_size
    figures = []
    for batch in batches:
        rng = random.Random(batch)
        ids = torch.tensor([random_prompt(rng, vocab, isl) for _ in range(batch)],
                           device="cuda")
        kwargs = dict(max_new_tokens=osl, min_new_tokens=osl, do_sample=False,
                      attention_mask=torch.ones_like(ids))
        try:
            with torch.no_grad():
                model.generate(ids, **{**kwargs, "max_new_tokens": 2, "min_new_tokens": 2})
                torch.cuda.synchronize()
                start = time.time()
                model.generate(ids, **kwargs)
                torch.cuda.synchronize()
        except torch.cuda.OutOfMemoryError:
            break
        figures.append((batch, batch * osl / (time.time() - start)))
        torch.cuda.empty_cache()
    return figures


def markdown(rows, hf):
    head = ["precision", "ISL/OSL", "max-batch", "requests", "output tok/s", "total tok/s",
            "TTFT p50 / p90 / p99 ms", "TPOT p50 / p90 / p99 ms"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        lines.append("| " + " | ".join([
            r["precision"], f"{r['isl']}/{r['osl']}", str(r["batch"]), str(r["requests"]),
            f"{r['out_tok_s']:,.0f}", f"{r['total_tok_s']:,.0f}",
            " / ".join(f"{r[f'ttft_p{q}']:.0f}" for q in (50, 90, 99)),
            " / ".join(f"{r[f'tpot_p{q}']:.2f}" for q in (50, 90, 99))]) + " |")
    if hf:
        best = max(hf, key=lambda f: f[1])
        lines.append("")
        lines.append("Hugging Face transformers bf16, 128/128, batch by batch: " +
                     ", ".join(f"batch {b}: {t:,.0f}" for b, t in hf) +
                     f" output tok/s (best: batch {best[0]}).")
    return "\n".join(lines) + "\n"


def plot(rows, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    keys = sorted({(r["precision"], r["isl"], r["osl"]) for r in rows})
    for precision, isl, osl in keys:
        rs = sorted((r for r in rows if (r["precision"], r["isl"], r["osl"]) == (precision, isl, osl)),
                    key=lambda r: r["batch"])
        label = f"{precision} {isl}/{osl}"
        left.plot([r["batch"] for r in rs], [r["out_tok_s"] for r in rs], "o-", label=label)
        right.plot([r["batch"] for r in rs], [r["tpot_p50"] for r in rs], "o-", label=label)
    left.set(xlabel="max-batch", ylabel="output tokens/s", xscale="log", title="Throughput")
    right.set(xlabel="max-batch", ylabel="TPOT p50, ms", xscale="log", title="Time per output token")
    for ax in (left, right):
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(f"cohere2c, Command R7B shapes, one H200 ({ARGS.commit})", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main():
    work = ARGS.work or tempfile.mkdtemp(prefix="throughput-")
    os.makedirs(work, exist_ok=True)
    rows = []
    for precision in ARGS.precisions.split(","):
        artifact = os.path.join(ARGS.artifacts, f"command-r7b-{precision}.so")
        vocab = vocab_of(ARGS.config)
        for isl, osl, batches in parse_cases(ARGS.cases):
            requests = os.path.join(work, f"requests-{isl}-{osl}.jsonl")
            write_requests(requests, ARGS.requests, isl, osl, vocab, seed=isl * 7919 + osl,
                           temperature=ARGS.temperature)
            for batch in batches:
                log = os.path.join(work, f"log-{precision}-{isl}-{osl}-{batch}.txt")
                r = run_cohere2c(artifact, requests, isl, osl, batch, log)
                r.update(precision=precision, isl=isl, osl=osl, batch=batch)
                rows.append(r)
                print(f"{precision} {isl}/{osl} max-batch {batch}: {r['out_tok_s']:,.0f} output tok/s, "
                      f"TPOT p50 {r['tpot_p50']:.2f} ms, TTFT p50 {r['ttft_p50']:.0f} ms "
                      f"({r['wall_s']:.0f} s)", flush=True)
    hf = run_hf(128, 128, [int(b) for b in ARGS.hf_batches.split(",")]) if ARGS.hf_checkpoint else []
    with open(os.path.join(work, "runs.tsv"), "w") as f:
        keys = list(rows[0].keys())
        f.write("\t".join(keys) + "\n")
        for r in rows:
            f.write("\t".join(str(r[k]) for k in keys) + "\n")
    table = markdown(rows, hf)
    print(table)
    if ARGS.markdown:
        with open(ARGS.markdown, "w") as f:
            f.write(table)
    if ARGS.plot:
        plot(rows, ARGS.plot)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--artifacts", required=True)
    ap.add_argument("--run", default=os.path.join(ROOT, "build", "bin", "cohere2c-run"))
    ap.add_argument("--config", default=os.path.join(ROOT, "test", "data", "configs",
                                                     "command-r7b.config.json"),
                    help="the config the artifacts were compiled from (for its vocabulary)")
    ap.add_argument("--precisions", default="bf16,fp8-rowwise")
    ap.add_argument("--cases", default="128/128:64,128,256,512;128/2048:256;2048/128:256")
    ap.add_argument("--requests", type=int, default=1024)
    ap.add_argument("--temperature", type=float, default=0.0)
    ap.add_argument("--hf-checkpoint")
    ap.add_argument("--hf-batches", default="64,128,256")
    ap.add_argument("--work")
    ap.add_argument("--markdown")
    ap.add_argument("--plot")
    ap.add_argument("--commit", default="")
    ARGS = ap.parse_args()
    main()
