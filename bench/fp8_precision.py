#!/usr/bin/env python3
"""Where an FP8-rowwise engine loses precision that the recipe does not ask it to lose.

Runs on a machine with PyTorch (a GPU helps, a CPU is enough): the trained Cohere2 model, teacher
forced over held-out sequences (perplexity.json: "sequences"), in float64 with the FP8-rowwise recipe
(every linear layer's input quantized per token, its weight per output channel, to e4m3 with scale
max(amax / 448, 1 / (448 * 512)); the recipe of docs/ARCHITECTURE.md) and, on top of it, each bf16
rounding that the cuda target performs, switched on one at a time and together. Prints, per variant,
the perplexity and its excess over float64 relative to the plain recipe's excess: the table of
bench/RESULTS.md ("FP8 rowwise: where the precision goes").

The rounding points (names used below), as the cuda target has them at the commit this was written:
  ln      LayerNorm output rounded to bf16 before its per-token quantization
  qkv     the q, k, v GEMM output bf16 (RoPE and the KV append read bf16)
  kv      the rotated q and the KV cache bf16 (what attention reads)
  p       attention's softmax weights rounded to bf16 before P @ V (FlashAttention-style)
  attn    attention output bf16 before its quantization for the o projection
  o_down  the o and down projections written in bf16 before the f32 residual sum
  gate_up the gate and up GEMM outputs bf16 before SwiGLU
  swiglu  SwiGLU output rounded to bf16 before its quantization
  final   the final LayerNorm output bf16 before the (bf16) logits GEMM

Usage: fp8_precision.py MODEL_DIR [PERPLEXITY_JSON ...]   (default MODEL_DIR/perplexity.json)
"""
import json, math, os, sys

import torch
from safetensors.torch import load_file

POINTS = ["ln", "qkv", "kv", "p", "attn", "o_down", "gate_up", "swiglu", "final"]
F64 = torch.float64


def bf16(x, on):
    return x.to(torch.bfloat16).to(F64) if on else x


def e4m3_rowwise(x):
    """Quantize-dequantize each row to e4m3 with the engine's scale (min 1/(448*512))."""
    scale = (x.abs().amax(-1, keepdim=True) / 448.0).clamp_min(1.0 / (448.0 * 512.0))
    return (x / scale).to(torch.float8_e4m3fn).to(F64) * scale


def layer_norm(x, w, eps):
    mu = x.mean(-1, keepdim=True)
    var = ((x - mu) ** 2).mean(-1, keepdim=True)
    return (x - mu) / torch.sqrt(var + eps) * w


def rope(x, pos, theta):
    """GPT-J (interleaved) rotary embedding; x: [T, H, D]."""
    d = x.shape[-1]
    inv = 1.0 / (theta ** (torch.arange(0, d, 2, dtype=F64, device=x.device) / d))
    ang = pos[:, None].to(F64) * inv[None, :]
    cos = torch.repeat_interleave(torch.cos(ang), 2, -1)[:, None, :]
    sin = torch.repeat_interleave(torch.sin(ang), 2, -1)[:, None, :]
    rot = torch.stack([-x[..., 1::2], x[..., ::2]], -1).flatten(-2)
    return x * cos + rot * sin


class Model:
    def __init__(self, folder, device):
        self.cfg = json.load(open(os.path.join(folder, "config.json")))
        sd = load_file(os.path.join(folder, "model.safetensors"))
        self.w = {k: v.to(device=device, dtype=F64) for k, v in sd.items()}
        # Weights quantized once, per output channel.
        self.q = {k: e4m3_rowwise(v) for k, v in self.w.items()
                  if k.endswith("_proj.weight")}
        self.device = device

    def logits(self, ids, on):
        c, w, q = self.cfg, self.w, self.q
        t = len(ids)
        pos = torch.arange(t, device=self.device)
        nh, nkv, hd = c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"]
        theta = c["rope_parameters"]["rope_theta"]
        eps, window = c["layer_norm_eps"], c["sliding_window"]
        causal = torch.tril(torch.ones(t, t, dtype=torch.bool, device=self.device))
        sliding_mask = causal & (pos[:, None] - pos[None, :] < window)
        lin = lambda a, name: e4m3_rowwise(a) @ q[name].T
        x = w["model.embed_tokens.weight"][torch.tensor(ids, device=self.device)]
        for i, kind in enumerate(c["layer_types"]):
            p = f"model.layers.{i}."
            h = bf16(layer_norm(x, w[p + "input_layernorm.weight"], eps), on["ln"])
            qh = bf16(lin(h, p + "self_attn.q_proj.weight"), on["qkv"]).view(t, nh, hd)
            kh = bf16(lin(h, p + "self_attn.k_proj.weight"), on["qkv"]).view(t, nkv, hd)
            vh = bf16(lin(h, p + "self_attn.v_proj.weight"), on["qkv"]).view(t, nkv, hd)
            sliding = kind == "sliding_attention"
            if sliding:
                qh, kh = rope(qh, pos, theta), rope(kh, pos, theta)
            qh, kh, vh = (bf16(t_, on["kv"]) for t_ in (qh, kh, vh))
            kh, vh = kh.repeat_interleave(nh // nkv, 1), vh.repeat_interleave(nh // nkv, 1)
            s = torch.einsum("thd,shd->hts", qh, kh) / math.sqrt(hd)
            s = s.masked_fill(~(sliding_mask if sliding else causal)[None], float("-inf"))
            # FlashAttention normalizes after P @ V: round the unnormalized weights.
            e = torch.exp(s - s.amax(-1, keepdim=True))
            a = torch.einsum("hts,shd->thd", bf16(e, on["p"]), vh) / e.sum(-1).T[:, :, None]
            a = bf16(a.reshape(t, nh * hd), on["attn"])
            o = bf16(lin(a, p + "self_attn.o_proj.weight"), on["o_down"])
            g = bf16(lin(h, p + "mlp.gate_proj.weight"), on["gate_up"])
            u = bf16(lin(h, p + "mlp.up_proj.weight"), on["gate_up"])
            m = bf16(torch.nn.functional.silu(g) * u, on["swiglu"])
            x = x + o + bf16(lin(m, p + "mlp.down_proj.weight"), on["o_down"])
        x = bf16(layer_norm(x, w["model.norm.weight"], eps), on["final"])
        emb = w["model.embed_tokens.weight"]  # bf16 in the checkpoint: exact in f64
        return (x @ emb.T) * c["logit_scale"]


def perplexity(model, sequences, on):
    nll, n = 0.0, 0
    with torch.no_grad():
        for ids in sequences:
            logits = model.logits(ids, on)
            target = torch.tensor(ids[1:], device=model.device)
            nll += torch.nn.functional.cross_entropy(logits[:-1], target, reduction="sum").item()
            n += len(ids) - 1
    return math.exp(nll / n)


def main():
    folder = sys.argv[1]
    sets = sys.argv[2:] or [os.path.join(folder, "perplexity.json")]
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = Model(folder, device)
    none = {k: False for k in POINTS}
    every = {k: True for k in POINTS}
    # The cuda target before, then with the roundings before the quantizers
    # removed step by step; the attention-internal ones (kv, p) last: they are
    # where the tensor-core kernels and the bf16 KV cache need bf16.
    variants = [("recipe (no bf16 rounding)", none), ("all (the cuda target before)", every)]
    removed = []
    for step in (["ln", "swiglu"], ["o_down"], ["attn"], ["gate_up"], ["qkv"], ["kv"]):
        removed += step
        variants.append((f"all but {', '.join(removed)}", dict(every, **{k: False for k in removed})))
    variants += [(f"recipe + {k}", dict(none, **{k: True})) for k in POINTS]
    for path in sets:
        ref = json.load(open(path))
        f64 = ref["perplexity_f64"]
        base = None
        print(f"## {path}: {sum(ref['tokens_scored'])} tokens, f64 {f64:.4f}, "
              f"emulation {ref['perplexity_fp8']:.4f}")
        print("| variant | perplexity | excess over f64 | x the recipe's |")
        print("|---|---|---|---|")
        for name, on in variants:
            ppl = perplexity(model, ref["sequences"], on)
            base = base if base is not None else ppl - f64
            print(f"| {name} | {ppl:.4f} | {ppl - f64:.4f} | {(ppl - f64) / base:.2f} |", flush=True)


if __name__ == "__main__":
    main()
