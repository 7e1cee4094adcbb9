#!/usr/bin/env python3
"""Make a second held-out perplexity set for the trained model, in perplexity.json's format.

The trained model's perplexity.json scores 16 held-out documents; a quantization tuned against one
set can fit its noise, so FP8 is also judged on a second set: COUNT other held-out documents of at
least 256 tokens (the first 256 tokens of each, BOS first), none among the first set's. The NLLs
come from the float64 reference forward (make_reference.py's reference_forward, the oracle the
first set was made with) in full precision and with the FP8-rowwise recipe emulated.

Runs where torch, transformers and safetensors are installed (a GPU helps). Inputs: the model
folder (config.json, model.safetensors, tokenizer.json, perplexity.json), the held-out documents
(heldout.txt: documents separated by a line holding only \\x1e, as the trained model's corpus
script writes them) and the reference script.

Usage: make_heldout_set.py MODEL_DIR HELDOUT_TXT MAKE_REFERENCE_PY OUT.json [--count 16] [--seed 11]
"""
import argparse, importlib.util, json, math, os, random

import torch
from safetensors.torch import load_file
from tokenizers import Tokenizer
from transformers import AutoConfig

LENGTH = 256


def load_reference(path):
    spec = importlib.util.spec_from_file_location("make_reference", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model")
    ap.add_argument("heldout")
    ap.add_argument("reference")
    ap.add_argument("out")
    ap.add_argument("--count", type=int, default=16)
    ap.add_argument("--seed", type=int, default=11)
    a = ap.parse_args()
    ref = load_reference(a.reference)
    tok = Tokenizer.from_file(os.path.join(a.model, "tokenizer.json"))
    first = {tuple(s) for s in json.load(open(os.path.join(a.model, "perplexity.json")))["sequences"]}
    docs = open(a.heldout).read().split("\n\x1e\n")
    candidates = []
    for d in docs:
        ids = tok.encode(d, add_special_tokens=True).ids
        if len(ids) >= LENGTH and tuple(ids[:LENGTH]) not in first:
            candidates.append(ids[:LENGTH])
    chosen = random.Random(a.seed).sample(candidates, a.count)

    cfg = AutoConfig.from_pretrained(a.model)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    sd = {k: v.to(device=device, dtype=torch.float64)
          for k, v in load_file(os.path.join(a.model, "model.safetensors")).items()}
    theta = cfg.rope_parameters["rope_theta"]
    torch.set_default_device(device)
    out = {"sequences": [], "nll_f64": [], "nll_fp8": [], "tokens_scored": []}
    with torch.no_grad():
        for ids in chosen:
            target = torch.tensor(ids[1:])
            for key, fp8 in (("nll_f64", False), ("nll_fp8", True)):
                logits = ref.reference_forward(cfg, sd, ids, theta, fp8=fp8)
                out[key].append(torch.nn.functional.cross_entropy(
                    logits[:-1], target, reduction="sum").item())
            out["sequences"].append(ids)
            out["tokens_scored"].append(len(ids) - 1)
    n = sum(out["tokens_scored"])
    for key in ("f64", "fp8"):
        out[f"perplexity_{key}"] = math.exp(sum(out[f"nll_{key}"]) / n)
    print(f"{len(candidates)} candidates, {a.count} chosen, {n} tokens: perplexity f64 "
          f"{out['perplexity_f64']:.4f}, fp8 emulation {out['perplexity_fp8']:.4f}")
    json.dump(out, open(a.out, "w"))


if __name__ == "__main__":
    main()
