//===- Passes.td - attn dialect passes ---------------------*- tablegen -*-===//
#ifndef COHERE2C_ATTN_TRANSFORMS_PASSES
#define COHERE2C_ATTN_TRANSFORMS_PASSES

include "mlir/Pass/PassBase.td"

def AttnQuantizeFP8Rowwise : Pass<"attn-quantize-fp8-rowwise", "ModuleOp"> {
  let summary = "Linear layers with FP8 weights -> per-token quantize + fp8_linear";
  let description = [{
    Every `attn.linear` whose weight is stored in float8 e4m3fn (with its
    per-output-channel `weight_scale`) becomes `attn.quantize` of its input
    (one scale per token) and `attn.fp8_linear`. Linear layers on the same
    input share one quantize (run `cse` after, as the pipelines do).
  }];
}

def AttnFuseNormQuant : Pass<"attn-fuse-norm-quant", "ModuleOp"> {
  let summary = "Fuse LayerNorm with the FP8 quantization of its output";
  let description = [{
    `attn.quantize` of an `attn.layer_norm` result becomes one
    `attn.layer_norm_quant`: one kernel writes the FP8 values and one scale
    per token.
  }];
}

def AttnFuseSwiGLUQuant : Pass<"attn-fuse-swiglu-quant", "ModuleOp"> {
  let summary = "Fuse SwiGLU with the FP8 quantization of its output";
  let description = [{
    `attn.quantize` of an `attn.swiglu` result (the down projection's input)
    becomes one `attn.swiglu_quant`.
  }];
}

#endif // COHERE2C_ATTN_TRANSFORMS_PASSES
