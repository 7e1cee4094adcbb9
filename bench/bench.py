#!/usr/bin/env python3
"""The benchmark helper: Hugging Face transformers and cohere2c on one random Command
R7B-shaped model, on one GPU. bench/run.sh runs the subcommands in this order; see it for the
whole flow and how to run it.

  cases --config CONFIG --work WORK
      The prompts (seeded random token ids, drawn afresh for every request, so that no two
      share a prefix but the pair meant to) and cohere2c-run's inputs: WORK/cases.json (every
      prompt, and which request measures what), WORK/requests-<run>.jsonl and WORK/runs.tsv (one
      cohere2c-run per line: run name, requests file, --max-batch, --kv-blocks (0: the default),
      "logits" if the run writes --logits-dir). Python alone.
  checkpoint --config CONFIG --out DIR [--fp8-out DIR8] [--seed 0] [--norm-noise 0.1]
      A random bf16 checkpoint of CONFIG's shapes, made on the GPU (torch, transformers): linear
      and embedding weights from N(0, initializer_range) as transformers initializes them, norm
      weights 1 + norm_noise * N(0, 1) (so that a dropped norm weight shows in the logits), saved
      with save_pretrained. DIR8: the same weights FP8-rowwise (e4m3 and one float32 scale
      amax / 448 per output row, computed in float64 as cohere2c's loader does), a checkpoint
      that cohere2c's fp8-rowwise artifact loads as it is, which saves the minute the loader takes
      to quantize 7e9 weights on the CPU.
  hf --checkpoint DIR --work WORK [--reference make_reference.py]
      Hugging Face transformers (bf16, sdpa, cuda; greedy generate, timed with CUDA events after
      a warm-up of each shape): WORK/hf.json (the figures of the table), WORK/hf-logits.safetensors
      (last-position logits of the check prompts). With --reference, that file's reference_forward
      (float64, on the GPU), FP8-rowwise and not, on the 2048-token check prompt:
      WORK/reference-logits.safetensors.
  report --config CONFIG --work WORK [--markdown FILE] [--device TEXT] [--commit TEXT]
      Reads what the other steps left in WORK, cohere2c-run's outputs included
      (WORK/c2c-<precision>-<run>.jsonl and .err, WORK/c2c-<precision>-<run>-logits/); prints the
      checks, then the table (markdown, also written to FILE). Exits 1 if a check fails or lacks
      its data.

Timing. cohere2c-run --requests prints, per request, ttft_ms and total_ms counted from the start
of the run; with --max-batch 1 requests run one after another, so a request's own time to first
token is its first-token time less the previous request's total_ms. A request of one new token
is finished by its first token: its total_ms is its first-token time. Decode tokens/s of a
request: (generated - 1) / (total_ms - ttft_ms); of a batch: all its requests' generated tokens
after the first over the time from the first first token to the last finish.
"""
import argparse
import json
import math
import os
import random
import sys

BLOCK_SIZE = 16             # cohere2c-run's default --block-size
HBM_BYTES_PER_S = 4.8e12    # H200
DECODE_NEW = 128            # cohere2c's generated tokens in the decode cases
HF_LONG_DECODE_NEW = 32     # Hugging Face's at the longest context (about 30 ms a token)
BATCHES = (16, 64)
BATCH_PROMPT = 512
PREFIX, SUFFIX = 4096, 128  # the shared prefix and each request's own tokens after it
WARM_BATCH_PROMPT, WARM_BATCH_NEW = 16, 4
COSINE_MIN = 0.999          # bf16 cohere2c against Hugging Face, last-position logits


def lengths(config):
    """Prompt lengths of the cases, from config.json's fields. cohere2c admits a request whose
    prompt + max_new_tokens is at most max_position_embeddings, so the longest prompt that
    generates one token is one less (8191 for Command R7B), and the long decode case is the
    prompt that reaches it after DECODE_NEW tokens."""
    context = min(8192, config["max_position_embeddings"])
    return {"prefill": [128, 2048, context - 1], "check": [2048, context - 1],
            "decode": [512, context - DECODE_NEW]}


# ---------------------------------------------------------------------------- cases


def kv_groups(config):
    """The KV groups of the config's model (Manifest.h, KVGroup): each window's layers in groups
    of gcd(layers per window) layers; a layer is sliding unless layer_types says full or, without
    layer_types, its index + 1 is a multiple of sliding_window_pattern."""
    layers = config["num_hidden_layers"]
    kinds = config.get("layer_types") or [
        "full_attention" if (i + 1) % config["sliding_window_pattern"] == 0 else "sliding_attention"
        for i in range(layers)]
    counts = [kinds.count(k) for k in set(kinds)]
    return layers // math.gcd(*counts)


def make_cases(config, seed=0):
    """Every request of every cohere2c run, and what each measures. Batch-1 run order: the check
    prompts first (their logits from the last prompt position; they also warm up the 2048- and
    longest-prompt shapes), warm-ups of the other shapes, the prefill cases, the shared-prefix
    pair, the decode cases. Requests that only time ask for no logits row (logits_from
    P + N - 1), so that writing logits costs nothing between timed requests."""
    rng = random.Random(seed)
    vocab = config["vocab_size"]

    def tokens(n):
        return [rng.randrange(6, vocab) for _ in range(n)]

    def request(rid, prompt, new, logits_from=None):
        return {"id": rid, "prompt_ids": prompt, "max_new_tokens": new,
                "logits_from": len(prompt) + new - 1 if logits_from is None else logits_from}

    n = lengths(config)
    b1 = [request(f"check-{p}", tokens(p), 1, p - 1) for p in n["check"]]
    b1.append(request("warm-decode", tokens(BATCH_PROMPT), 16))
    warm = {p: f"check-{p}" for p in n["check"]}
    for p in sorted({*n["prefill"], PREFIX + SUFFIX} - set(n["check"])):
        b1.append(request(f"warm-{p}", tokens(p), 1))
        warm[p] = f"warm-{p}"
    b1 += [request(f"prefill-{p}", tokens(p), 1) for p in n["prefill"]]
    prefix = tokens(PREFIX)
    b1.append(request("prefix-uncached", prefix + tokens(SUFFIX), 1))
    b1.append(request("prefix-cached", prefix + tokens(SUFFIX), 1))
    b1 += [request(f"decode-{p}", tokens(p), DECODE_NEW) for p in n["decode"]]

    runs = {"b1": {"max_batch": 1, "kv_blocks": 0, "step_tokens": 0, "logits": True, "requests": b1}}
    batches = {}
    for b in BATCHES:
        # A warm-up wave of short requests, then the measured wave: --max-batch b admits each
        # wave whole once the one before has finished.
        wave_warm = [request(f"b{b}-warm-{i}", tokens(WARM_BATCH_PROMPT), WARM_BATCH_NEW)
                     for i in range(b)]
        wave = [request(f"b{b}-{i}", tokens(BATCH_PROMPT), DECODE_NEW) for i in range(b)]
        # Each group's blocks for the whole sequence (shorter than the window), + partial
        # blocks and slack.
        blocks_each = kv_groups(config) * (-(-(BATCH_PROMPT + DECODE_NEW) // BLOCK_SIZE) + 4)
        # A wave's prompts in one step (the default step budget of 8192 tokens would compute
        # them in chunks between the first requests' decode tokens, which their decode rates
        # would then include): the figure is the rate of a wave decoding together.
        runs[f"b{b}"] = {"max_batch": b, "kv_blocks": b * blocks_each, "logits": False,
                         "step_tokens": max(8192, b * BATCH_PROMPT), "requests": wave_warm + wave}
        batches[str(b)] = {"run": f"b{b}", "warm": [r["id"] for r in wave_warm],
                           "measured": [r["id"] for r in wave]}
    return {
        "seed": seed,
        "runs": runs,
        "check": {str(p): f"check-{p}" for p in n["check"]},
        "prefill": {str(p): f"prefill-{p}" for p in n["prefill"]},
        "warm": {str(p): rid for p, rid in warm.items()},
        "prefix": {"tokens": PREFIX, "suffix": SUFFIX, "uncached": "prefix-uncached",
                   "cached": "prefix-cached"},
        "decode": {str(p): f"decode-{p}" for p in n["decode"]},
        "hf_decode_new": {str(p): DECODE_NEW if p <= BATCH_PROMPT else HF_LONG_DECODE_NEW
                          for p in n["decode"]},
        "warm_decode": "warm-decode",
        "batch": batches,
        "batch_new": DECODE_NEW,
    }


def prompts_by_id(cases):
    """Every request's prompt by its id (ids are unique across the runs)."""
    return {r["id"]: r["prompt_ids"] for run in cases["runs"].values() for r in run["requests"]}


def cmd_cases(args):
    config = json.load(open(args.config))
    cases = make_cases(config, args.seed)
    os.makedirs(args.work, exist_ok=True)
    with open(os.path.join(args.work, "cases.json"), "w") as f:
        json.dump(cases, f)
    with open(os.path.join(args.work, "runs.tsv"), "w") as tsv:
        for name, run in cases["runs"].items():
            path = f"requests-{name}.jsonl"
            with open(os.path.join(args.work, path), "w") as f:
                for r in run["requests"]:
                    f.write(json.dumps(r) + "\n")
            tsv.write(f"{name}\t{path}\t{run['max_batch']}\t{run['kv_blocks']}\t"
                      f"{run['step_tokens']}\t{'logits' if run['logits'] else '-'}\n")
    print(f"cases: {sum(len(r['requests']) for r in cases['runs'].values())} requests in "
          f"{len(cases['runs'])} cohere2c runs, in {args.work}")


# ------------------------------------------------------------------------ checkpoint


def is_linear(name):
    return name.startswith("model.layers.") and name.endswith("_proj.weight")


def cmd_checkpoint(args):
    import shutil
    import tempfile
    import torch
    from safetensors.torch import save_file
    from transformers import AutoConfig, Cohere2ForCausalLM

    with tempfile.TemporaryDirectory() as tmp:  # read CONFIG as transformers reads a checkpoint's
        shutil.copy(args.config, os.path.join(tmp, "config.json"))
        config = AutoConfig.from_pretrained(tmp)
    torch.manual_seed(args.seed)
    try:
        with torch.device("cuda"):  # built and initialized on the GPU: seconds, not minutes
            model = Cohere2ForCausalLM(config)
    except Exception as e:
        print(f"checkpoint: building the model on the GPU failed ({e}); building it on the CPU")
        model = Cohere2ForCausalLM(config).to("cuda")
    std = config.initializer_range
    with torch.no_grad():
        for name, p in model.named_parameters():  # tied lm_head.weight comes once, as the embedding
            if name.endswith("norm.weight"):
                p.copy_(1.0 + args.norm_noise * torch.randn_like(p))
            else:
                p.normal_(0.0, std)
        embed, head = model.get_input_embeddings().weight, model.get_output_embeddings().weight
        if head.data_ptr() != embed.data_ptr():
            head.copy_(embed)
    model = model.to(torch.bfloat16)

    if args.fp8_out:
        os.makedirs(args.fp8_out, exist_ok=True)
        tensors = {}
        with torch.no_grad():
            for name, p in model.state_dict().items():
                if name == "lm_head.weight":
                    continue
                if is_linear(name):
                    w = p.double()
                    scale = w.abs().amax(-1, keepdim=True).clamp_min(1e-12) / 448.0
                    # As cohere2c's loader: the float64 quotient rounded to float, then to e4m3.
                    tensors[name] = (w / scale).float().to(torch.float8_e4m3fn).cpu()
                    tensors[name + "_scale"] = scale.squeeze(-1).float().cpu()
                else:
                    tensors[name] = p.detach().cpu().contiguous()
        save_file(tensors, os.path.join(args.fp8_out, "model.safetensors"))
        del tensors
    model.to("cpu").save_pretrained(args.out)
    if args.fp8_out:
        shutil.copy(os.path.join(args.out, "config.json"), os.path.join(args.fp8_out, "config.json"))
    print(f"checkpoint: {sum(p.numel() for p in model.parameters()) / 1e9:.2f}e9 parameters "
          f"(seed {args.seed}) in {args.out}" + (f"; FP8-rowwise in {args.fp8_out}" if args.fp8_out else ""))


# -------------------------------------------------------------------- Hugging Face


def cmd_hf(args):
    import gc
    import torch
    import transformers

    transformers.logging.set_verbosity_error()
    cases = json.load(open(os.path.join(args.work, "cases.json")))
    prompts = prompts_by_id(cases)
    model = load_hf_model(args.checkpoint)
    config = model.config
    result = hf_measure(model, cases, prompts, args.work)
    with open(os.path.join(args.work, "hf.json"), "w") as f:
        json.dump(result, f, indent=1)
    if not args.reference:
        print("reference: skipped (no make_reference.py given: --reference)")
        return
    del model
    gc.collect()
    torch.cuda.empty_cache()
    try:
        hf_reference(args.reference, args.checkpoint, config, prompts[cases["check"]["2048"]], args.work)
    except Exception as e:  # informative numbers only: say why and go on
        print(f"reference: failed ({type(e).__name__}: {e})")


def load_hf_model(checkpoint):
    """The checkpoint in transformers, bf16 with sdpa attention, on the GPU."""
    import importlib.util
    import torch
    from transformers import AutoModelForCausalLM
    kwargs = {"dtype": torch.bfloat16, "attn_implementation": "sdpa"}
    if importlib.util.find_spec("accelerate"):  # device_map needs it; else load, then move
        kwargs["device_map"] = "cuda"
    return AutoModelForCausalLM.from_pretrained(checkpoint, **kwargs).to("cuda").eval()


def hf_measure(model, cases, prompts, work):
    """Hugging Face's figures (the dict written to hf.json); writes the check prompts'
    last-position logits to WORK/hf-logits.safetensors."""
    import torch
    import transformers
    from safetensors.torch import save_file
    from transformers import GenerationConfig

    config = model.config

    def ids(*rids):
        """The prompts of requests `rids` (of one length) as a [len(rids), P] batch."""
        return torch.tensor([prompts[rid] for rid in rids], device="cuda")

    def generate(input_ids, new):
        """Greedy, exactly `new` tokens (EOS masked until then); returns the elapsed ms."""
        gen = GenerationConfig(max_new_tokens=new, min_new_tokens=new, do_sample=False,
                               pad_token_id=config.pad_token_id, bos_token_id=config.bos_token_id,
                               eos_token_id=config.eos_token_id)
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        out = model.generate(input_ids=input_ids, attention_mask=torch.ones_like(input_ids),
                             generation_config=gen)
        end.record()
        end.synchronize()
        assert out.shape == (input_ids.shape[0], input_ids.shape[1] + new), out.shape
        return start.elapsed_time(end)

    result = {"device": torch.cuda.get_device_name(), "torch": torch.__version__,
              "transformers": transformers.__version__, "prefill_ms": {}, "decode_tps": {},
              "decode_new": cases["hf_decode_new"], "batch_tps": {}, "batch_new": cases["batch_new"]}
    with torch.inference_mode():
        generate(ids(cases["warm_decode"]), 16)
        logits = {}
        for p, rid in cases["check"].items():
            logits[f"hf.{p}"] = model(input_ids=ids(rid), use_cache=False,
                                      logits_to_keep=1).logits[0, -1].float().cpu()
        save_file(logits, os.path.join(work, "hf-logits.safetensors"))
        print(f"hf: last-position logits of the {', '.join(cases['check'])}-token check prompts")

        for p, rid in cases["prefill"].items():
            generate(ids(cases["warm"][p]), 1)
            result["prefill_ms"][p] = generate(ids(rid), 1)
        prefix = cases["prefix"]
        whole = str(prefix["tokens"] + prefix["suffix"])
        generate(ids(cases["warm"][whole]), 1)
        result["prefix_ms"] = generate(ids(prefix["uncached"]), 1)
        print(f"hf: prefill ms {result['prefill_ms']}, {whole} tokens {result['prefix_ms']:.1f}")

        # Each timed call is first made once untimed with the same shapes: generate may
        # build (and compile) per cache length and batch.
        for p, rid in cases["decode"].items():
            new = cases["hf_decode_new"][p]
            generate(ids(rid), 1)
            generate(ids(rid), new)
            first = generate(ids(rid), 1)
            total = generate(ids(rid), new)
            result["decode_tps"][p] = (new - 1) / (total - first) * 1000
        for b, batch in cases["batch"].items():
            generate(ids(*batch["measured"]), 1)
            generate(ids(*batch["measured"]), cases["batch_new"])
            first = generate(ids(*batch["measured"]), 1)
            total = generate(ids(*batch["measured"]), cases["batch_new"])
            result["batch_tps"][b] = int(b) * (cases["batch_new"] - 1) / (total - first) * 1000
        print(f"hf: decode tokens/s {result['decode_tps']}, batches {result['batch_tps']}")
    return result


def hf_reference(make_reference, checkpoint, config, prompt, work):
    """make_reference.py's reference_forward in float64 on the GPU, full and FP8-rowwise, on
    `prompt`: its last-position logits to WORK/reference-logits.safetensors (ref_full.<P>,
    ref_fp8.<P>). The weights in float64 take about 64 GB of GPU memory."""
    import glob
    import importlib.util
    import torch
    from safetensors.torch import load_file, save_file

    spec = importlib.util.spec_from_file_location("make_reference", make_reference)
    reference = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(reference)
    raw = json.load(open(os.path.join(checkpoint, "config.json")))
    theta = (raw.get("rope_parameters") or {}).get("rope_theta", raw.get("rope_theta"))
    weights = {}
    for path in sorted(glob.glob(os.path.join(checkpoint, "*.safetensors"))):
        weights.update(load_file(path, device="cuda"))
    out = {}
    # Factory calls inside reference_forward (arange, tensor, ones) make CUDA tensors here.
    with torch.inference_mode(), torch.device("cuda"):
        for name, fp8 in (("ref_full", False), ("ref_fp8", True)):
            logits = reference.reference_forward(config, weights, prompt, theta, fp8=fp8)
            out[f"{name}.{len(prompt)}"] = logits[-1].cpu()
            del logits
    save_file(out, os.path.join(work, "reference-logits.safetensors"))
    print(f"reference: float64 logits, full and FP8-rowwise, last position of the "
          f"{len(prompt)}-token check prompt")


# ----------------------------------------------------------------------------- report


def weight_bytes(config, precision):
    """Bytes of weights a decode step reads: every weight once (the tied embedding as the output
    projection; the embedding lookup reads one row). bf16: 2 bytes each. fp8-rowwise: the linear
    layers' weights 1 byte each and a float32 scale per output row; embedding and norms bf16."""
    h, v, layers = config["hidden_size"], config["vocab_size"], config["num_hidden_layers"]
    d = config.get("head_dim", h // config["num_attention_heads"])
    q, kv, i = config["num_attention_heads"] * d, config["num_key_value_heads"] * d, config["intermediate_size"]
    linear = layers * (h * (q + 2 * kv) + q * h + 3 * h * i)
    rows = layers * (q + 2 * kv + h + 2 * i + h)
    other = v * h + (layers + 1) * h
    if precision == "bf16":
        return 2 * (linear + other)
    return linear + 4 * rows + 2 * other


def read_jsonl(path):
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return {r["id"]: r for r in map(json.loads, filter(str.strip, f))}


def first_token_ms(r):
    """A request's first-token time from the start of the run (see the module's doc)."""
    return r["total_ms"] if len(r["generated_ids"]) == 1 else r["ttft_ms"]


def cohere2c_figures(cases, work, precision):
    """The table's figures of one precision, from its cohere2c-run outputs; None where missing."""
    fig = {"prefill_ms": {}, "decode_tps": {}, "batch_tps": {}, "prefix_ms": {}, "cached_tokens": {},
           "preemptions": {}, "missing": []}
    b1 = read_jsonl(os.path.join(work, f"c2c-{precision}-b1.jsonl"))
    own = {}
    if b1 is None:
        fig["missing"].append(f"c2c-{precision}-b1.jsonl")
    else:
        previous = 0.0
        for r in cases["runs"]["b1"]["requests"]:
            if r["id"] not in b1:
                fig["missing"].append(f"request {r['id']} of c2c-{precision}-b1")
                break  # the run stopped: later requests have no previous total_ms
            result = b1[r["id"]]
            own[r["id"]] = first_token_ms(result) - previous
            previous = result["total_ms"]
    for p, rid in cases["prefill"].items():
        fig["prefill_ms"][p] = own.get(rid)
    for key in ("uncached", "cached"):
        rid = cases["prefix"][key]
        fig["prefix_ms"][key] = own.get(rid)
        fig["cached_tokens"][key] = b1[rid]["cached_tokens"] if b1 and rid in b1 else None
    for p, rid in cases["decode"].items():
        r = b1.get(rid) if b1 else None
        fig["decode_tps"][p] = ((len(r["generated_ids"]) - 1) / (r["total_ms"] - r["ttft_ms"]) * 1000
                                if r else None)
    for b, batch in cases["batch"].items():
        results = read_jsonl(os.path.join(work, f"c2c-{precision}-{batch['run']}.jsonl"))
        measured = [results.get(rid) for rid in batch["measured"]] if results else [None]
        if None in measured:
            fig["missing"].append(f"c2c-{precision}-{batch['run']}")
            fig["batch_tps"][b] = None
        else:
            window = max(r["total_ms"] for r in measured) - min(r["ttft_ms"] for r in measured)
            fig["batch_tps"][b] = sum(len(r["generated_ids"]) - 1 for r in measured) / window * 1000
    for run in cases["runs"]:
        err = os.path.join(work, f"c2c-{precision}-{run}.err")
        if os.path.exists(err):
            for line in open(err):
                if "preemptions" in line:
                    fig["preemptions"][run] = int(line.rsplit("preemptions", 1)[1].split()[0])
    return fig


def load_logits(path, key):
    """Tensor `key` of a safetensors file as a float64 vector; None if the file or the tensor is
    missing."""
    if not os.path.exists(path):
        return None
    import numpy as np
    from safetensors.numpy import load_file
    tensors = load_file(path)
    return tensors[key].astype(np.float64).reshape(-1) if key in tensors else None


def cohere2c_last_logits(work, precision, prompt_len):
    """cohere2c's logits of the last prompt position of check request `prompt_len`, from the one
    row its --logits-dir file holds; None (and a message) if missing or not that row."""
    path = os.path.join(work, f"c2c-{precision}-b1-logits", f"check-{prompt_len}.safetensors")
    if not os.path.exists(path):
        return None
    import numpy as np
    from safetensors.numpy import load_file
    t = load_file(path)
    rows, first = t["logits"].shape[0], int(t["first_row"][0])
    if rows != 1 or first != int(prompt_len) - 1:
        print(f"{path}: expected the one row of position {int(prompt_len) - 1}, found {rows} "
              f"rows from position {first}")
        return None
    return t["logits"][0].astype(np.float64)


def cosine(a, b):
    import numpy as np
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def fmt(x):
    return "n/a" if x is None else f"{x:.2f}" if abs(x) < 10 else f"{x:.1f}"


def ratio(ours, hf, higher_is_better):
    if ours is None or hf is None or ours == 0 or hf == 0:
        return "n/a"
    return f"{(ours / hf if higher_is_better else hf / ours):.2f}x"


def share(tps, limit):
    return "n/a" if tps is None else f"{100 * tps / limit:.0f}%"


def markdown_table(header, rows):
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows)]
    line = lambda cells: "| " + " | ".join(str(c).ljust(w) for c, w in zip(cells, widths)) + " |"
    return "\n".join([line(header), "|" + "|".join("-" * (w + 2) for w in widths) + "|"] +
                     [line(r) for r in rows])


def cmd_report(args):
    config = json.load(open(args.config))
    work = args.work
    cases = json.load(open(os.path.join(work, "cases.json")))
    hf = json.load(open(os.path.join(work, "hf.json"))) if os.path.exists(os.path.join(work, "hf.json")) else None
    precisions = ("bf16", "fp8-rowwise")
    ours = {p: cohere2c_figures(cases, work, p) for p in precisions}
    limit = {p: HBM_BYTES_PER_S / weight_bytes(config, p) for p in precisions}  # tokens/s at batch 1
    failures = []

    print("--- checks")
    if hf is None:
        print("missing: hf.json (the Hugging Face step did not finish)")
    for p in precisions:
        for what in ours[p]["missing"]:
            print(f"missing: cohere2c {p}: {what}")
        for run, n in ours[p]["preemptions"].items():
            if n:
                print(f"note: cohere2c {p} run {run} preempted {n} times (the KV cache was too small)")
    hf_logits = os.path.join(work, "hf-logits.safetensors")
    for length in cases["check"]:
        a = load_logits(hf_logits, f"hf.{length}")
        b = cohere2c_last_logits(work, "bf16", length)
        if a is None or b is None:
            print(f"FAIL cohere2c bf16 vs Hugging Face, last position of a {length}-token prompt: "
                  f"no logits ({'Hugging Face' if a is None else 'cohere2c'})")
            failures.append(f"logits {length}")
            continue
        cos = cosine(a, b)
        ok = cos >= COSINE_MIN
        print(f"{'PASS' if ok else 'FAIL'} cohere2c bf16 vs Hugging Face bf16, last position of a "
              f"{length}-token prompt: cosine {cos:.5f} (at least {COSINE_MIN}); top-1 "
              f"{'same' if a.argmax() == b.argmax() else 'differs'}")
        if not ok:
            failures.append(f"logits {length}")
    prefix = cases["prefix"]
    for p in precisions:
        cached, uncached = ours[p]["cached_tokens"]["cached"], ours[p]["cached_tokens"]["uncached"]
        if cached is None:
            continue  # reported as missing above
        ok = cached >= prefix["tokens"] - BLOCK_SIZE and uncached == 0
        print(f"{'PASS' if ok else 'FAIL'} cohere2c {p} prefix reuse: the second request was served "
              f"{cached} cached tokens (expected about {prefix['tokens']}), the first {uncached} (expected 0)")
        if not ok:
            failures.append(f"prefix {p}")

    print("--- FP8-rowwise (informative: on random weights cosines are no measure of the recipe;"
          " perplexity on the trained model is, bench/RESULTS.md)")
    for length in cases["check"]:
        a, b = (cohere2c_last_logits(work, p, length) for p in precisions)
        if a is not None and b is not None:
            print(f"cohere2c fp8-rowwise vs cohere2c bf16, last position of a {length}-token prompt: "
                  f"cosine {cosine(a, b):.5f}")
    ref = os.path.join(work, "reference-logits.safetensors")
    if os.path.exists(ref):
        r_full, r_fp8 = load_logits(ref, "ref_full.2048"), load_logits(ref, "ref_fp8.2048")
        pairs = [("cohere2c fp8-rowwise vs the float64 FP8-rowwise reference",
                  cohere2c_last_logits(work, "fp8-rowwise", "2048"), r_fp8),
                 ("float64 FP8-rowwise reference vs float64 reference", r_fp8, r_full),
                 ("cohere2c bf16 vs float64 reference", cohere2c_last_logits(work, "bf16", "2048"), r_full),
                 ("Hugging Face bf16 vs float64 reference", load_logits(hf_logits, "hf.2048"), r_full)]
        for label, a, b in pairs:
            if a is not None and b is not None:
                print(f"{label}, last position of the 2048-token prompt: cosine {cosine(a, b):.5f}")
    else:
        print("float64 references: not computed (bench/run.sh --reference make_reference.py)")

    hf_get = lambda key, k=None: None if hf is None else (hf[key].get(k) if k else hf.get(key))
    rows = []

    def row(label, hf_value, key, sub, higher, batch=None):
        """One case: Hugging Face's figure, then each precision's with its speedup (and, for
        decode, its share of the bandwidth limit)."""
        def limit_of(p):
            return batch * limit[p] if batch else None
        cells = [label, fmt(hf_value), share(hf_value, limit_of("bf16")) if batch else ""]
        for p in precisions:
            value = ours[p][key].get(sub)
            cells += [fmt(value), ratio(value, hf_value, higher),
                      share(value, limit_of(p)) if batch else ""]
        rows.append(cells)

    for p in cases["prefill"]:
        row(f"prefill {p} tokens: time to first token, ms", hf_get("prefill_ms", p), "prefill_ms", p, False)
    for p in cases["decode"]:
        row(f"decode batch 1, context {p}: tokens/s", hf_get("decode_tps", p), "decode_tps", p, True, 1)
    for b in cases["batch"]:
        row(f"decode batch {b}, context {BATCH_PROMPT}: tokens/s", hf_get("batch_tps", b),
            "batch_tps", b, True, int(b))
    shared = f"{prefix['tokens']}-token prefix + {prefix['suffix']}"
    row(f"{shared}: time to first token, uncached, ms", hf_get("prefix_ms"), "prefix_ms", "uncached", False)
    row(f"{shared}: time to first token, cached, ms", hf_get("prefix_ms"), "prefix_ms", "cached", False)

    header = ["case", "HF bf16", "of limit", "cohere2c bf16", "x HF", "of limit",
              "cohere2c fp8-rowwise", "x HF", "of limit"]
    hf_new = cases["hf_decode_new"]
    notes = [
        f"Shapes of {os.path.basename(args.config)}, random weights (bf16 checkpoint, prompt seed "
        f"{cases['seed']}); "
        f"{args.device or 'device unknown'}; commit {args.commit or 'unknown'}"
        + (f"; Hugging Face transformers {hf['transformers']} (torch {hf['torch']}), sdpa, greedy generate"
           if hf else ""),
        "x HF: speedup over Hugging Face (its time / ours; our tokens/s / its). of limit: tokens/s over "
        f"the weight-bandwidth limit, batch x {HBM_BYTES_PER_S / 1e12:.1f} TB/s / weight bytes per step "
        f"(bf16 {weight_bytes(config, 'bf16') / 1e9:.2f} GB: {limit['bf16']:.0f} tokens/s at batch 1; "
        f"fp8-rowwise {weight_bytes(config, 'fp8-rowwise') / 1e9:.2f} GB: {limit['fp8-rowwise']:.0f}).",
        f"decode: tokens after the first over the time after the first token; cohere2c generates "
        f"{DECODE_NEW} tokens, Hugging Face " + ", ".join(f"{n} at context {p}" for p, n in hf_new.items())
        + f" and {cases['batch_new']} in the batches (prompts of {BATCH_PROMPT} tokens; a batch's tokens/s "
        "is the sum over its requests).",
        f"prefill {max(map(int, cases['prefill']))}: the longest prompt that still generates a token "
        f"(prompt + new tokens at most max_position_embeddings, {config['max_position_embeddings']}).",
        f"{shared}: the first request of the pair computes its whole prompt; the second shares the "
        "prefix and reuses its KV blocks (--max-batch 1). Hugging Face has no prefix reuse: both rows "
        f"show its prefill of {prefix['tokens'] + prefix['suffix']} tokens.",
    ]
    targets = []
    bf16, fp8 = ours["bf16"], ours["fp8-rowwise"]
    d512 = str(lengths(config)["decode"][0])
    for p, least in (("bf16", 200), ("fp8-rowwise", 330)):
        v = ours[p]["decode_tps"].get(d512)
        targets.append(f"{p} decode at batch 1 (context {d512}) at least {least} tokens/s: "
                       f"{'n/a' if v is None else ('met' if v >= least else 'not met')} ({fmt(v)})")
    hf2048, b2048, f2048 = hf_get("prefill_ms", "2048"), bf16["prefill_ms"].get("2048"), fp8["prefill_ms"].get("2048")
    targets.append("bf16 prefill of 2048 tokens faster than Hugging Face: " +
                   ("n/a" if None in (hf2048, b2048) else ("met" if b2048 < hf2048 else "not met")))
    targets.append("fp8-rowwise prefill of 2048 tokens faster still: " +
                   ("n/a" if None in (b2048, f2048) else ("met" if f2048 < b2048 else "not met")))
    for p in precisions:
        c, u = ours[p]["prefix_ms"].get("cached"), ours[p]["prefix_ms"].get("uncached")
        targets.append(f"{p} cached-prefix time to first token at most 1/8 of the uncached: " +
                       ("n/a" if None in (c, u) else f"{'met' if c <= u / 8 else 'not met'} ({c / u:.3f})"))
    print("--- performance targets (informative)")
    print("\n".join(targets))

    print("--- " + (f"FAILED: {', '.join(failures)}" if failures else "all checks passed"))
    table = markdown_table(header, rows)
    text = table + "\n\n" + "\n".join(f"- {n}" for n in notes) + "\n"
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text)
    print("--- table" + (f" (also in {args.markdown})" if args.markdown else ""))
    print(text, end="")
    return 1 if failures else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    c = sub.add_parser("cases")
    c.add_argument("--config", required=True)
    c.add_argument("--work", required=True)
    c.add_argument("--seed", type=int, default=0)
    c = sub.add_parser("checkpoint")
    c.add_argument("--config", required=True)
    c.add_argument("--out", required=True)
    c.add_argument("--fp8-out")
    c.add_argument("--seed", type=int, default=0)
    c.add_argument("--norm-noise", type=float, default=0.1)
    c = sub.add_parser("hf")
    c.add_argument("--checkpoint", required=True)
    c.add_argument("--work", required=True)
    c.add_argument("--reference", help="make_reference.py, for the float64 references")
    c = sub.add_parser("report")
    c.add_argument("--config", required=True)
    c.add_argument("--work", required=True)
    c.add_argument("--markdown", help="also write the table here")
    c.add_argument("--device", default="")
    c.add_argument("--commit", default="")
    args = ap.parse_args()
    handler = {"cases": cmd_cases, "checkpoint": cmd_checkpoint, "hf": cmd_hf, "report": cmd_report}
    sys.exit(handler[args.command](args) or 0)


if __name__ == "__main__":
    main()
