//===- AttnOps.td - attn dialect operations ----------------*- tablegen -*-===//
#ifndef COHERE2C_ATTN_OPS
#define COHERE2C_ATTN_OPS

include "cohere2c/Dialect/Attn/IR/AttnAttrs.td"
include "mlir/IR/OpBase.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

// [tokens, features] activations; tokens is dynamic (one model step).
def Attn_Activation : 2DTensorOf<[F32, BF16, F16]>;
def Attn_TokenVector : 1DTensorOf<[I32]>;

def Attn_WeightOp : Attn_Op<"weight", [Symbol, HasParent<"ModuleOp">]> {
  let summary = "A model weight, bound at load time";
  let description = [{
    Declares a weight tensor by its Hugging Face name, its static shape and
    element type, and its byte offset in the weights file the compiler
    writes beside the artifact (the runtime binds the same layout from a
    checkpoint or from random values).

    ```mlir
    attn.weight @"model.norm.weight" : tensor<128xf32> at 1234560
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, TypeAttrOf<AnyStaticShapeTensor>:$type,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$offset);
  let assemblyFormat = "$sym_name `:` $type `at` $offset attr-dict";
  let hasVerifier = 1;
}

def Attn_EmbeddingOp : Attn_Op<"embedding", [Pure, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Embedding lookup: out[t, :] = weight[ids[t], :]";
  let description = [{
    `weight` is [vocab, hidden], converted to the result's element type;
    ids outside [0, vocab) are rejected by the runtime before a step runs.
  }];
  let arguments = (ins Attn_TokenVector:$ids, FlatSymbolRefAttr:$weight);
  let results = (outs Attn_Activation:$result);
  let assemblyFormat = "$ids `,` $weight attr-dict `:` type($ids) `->` type($result)";
}

def Attn_LayerNormOp : Attn_Op<"layer_norm", [Pure, SameOperandsAndResultShape,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Cohere LayerNorm: mean-subtracting, weight, no bias";
  let description = [{
    out[t] = (x[t] - mean(x[t])) / sqrt(var(x[t]) + eps) * weight, with the
    statistics in f32 whatever the element types (Cohere's reference code).
    `weight` is [hidden] of the result's element type; the input may be
    wider (the f32 residual stream feeding bf16 activations).
  }];
  let arguments = (ins Attn_Activation:$input, FlatSymbolRefAttr:$weight, F64Attr:$eps);
  let results = (outs Attn_Activation:$result);
  let assemblyFormat = "$input `,` $weight attr-dict `:` type($input) `->` type($result)";
}

def Attn_LinearOp : Attn_Op<"linear", [Pure, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "out = input @ weight^T, no bias";
  let description = [{
    input [tokens, in_features], weight [out_features, in_features] (the
    Hugging Face nn.Linear layout, the input's element type), result
    [tokens, out_features] of the input's element type or f32 (the f32
    accumulator kept, for outputs that feed the f32 residual stream).
  }];
  let arguments = (ins Attn_Activation:$input, FlatSymbolRefAttr:$weight,
                       OptionalAttr<FlatSymbolRefAttr>:$weight_scale);
  let results = (outs Attn_Activation:$result);
  let assemblyFormat = [{
    $input `,` $weight (`scale` $weight_scale^)? attr-dict `:` type($input) `->` type($result)
  }];
}

def Attn_FP8Activation : 2DTensorOf<[F8E4M3FN]>;
def Attn_RowScales : 1DTensorOf<[F32]>;

def Attn_QuantizeOp : Attn_Op<"quantize", [Pure]> {
  let summary = "FP8 rowwise quantization of activations, one scale per token";
  let description = [{
    scale[t] = max(amax(|x[t]|) / 448, 1 / (448 * 512)); q[t] = x[t] / scale[t]
    rounded to the nearest float8 e4m3fn value, saturating at +-448
    (docs/ARCHITECTURE.md, "Precision"). The floor 1/(448*512) makes an
    all-zero row give zeros, never NaN.
  }];
  let arguments = (ins Attn_Activation:$input);
  let results = (outs Attn_FP8Activation:$values, Attn_RowScales:$scales);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($values) `,` type($scales)";
  let hasVerifier = 1;
}

def Attn_FP8LinearOp : Attn_Op<"fp8_linear", [Pure, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Linear layer on FP8 rowwise operands";
  let description = [{
    out[t, n] = x_scale[t] * w_scale[n] * sum_k x[t, k] * w[n, k], accumulated
    in f32: x [tokens, in] e4m3 with per-token scales, `weight` [out, in]
    e4m3 with per-output-channel scales `weight_scale` [out] (amax / 448).
  }];
  let arguments = (ins Attn_FP8Activation:$input, Attn_RowScales:$input_scales,
                       FlatSymbolRefAttr:$weight, FlatSymbolRefAttr:$weight_scale);
  let results = (outs Attn_Activation:$result);
  let assemblyFormat = [{
    $input `,` $input_scales `,` $weight `scale` $weight_scale attr-dict `:`
    type($input) `,` type($input_scales) `->` type($result)
  }];
}

def Attn_LayerNormQuantOp : Attn_Op<"layer_norm_quant", [Pure,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "LayerNorm fused with the FP8 rowwise quantization of its output";
  let description = [{
    attn.layer_norm followed by attn.quantize of its result, as one op (one
    kernel: the normalized row never leaves the chip before quantization).
    `norm_type` is the element type the unfused layer norm produced (and
    its weight's). The normalized row is quantized from its f32 value, not
    rounded to `norm_type` first: the FP8 recipe quantizes the exact value.
  }];
  let arguments = (ins Attn_Activation:$input, FlatSymbolRefAttr:$weight, F64Attr:$eps,
                       TypeAttr:$norm_type);
  let results = (outs Attn_FP8Activation:$values, Attn_RowScales:$scales);
  let assemblyFormat = [{
    $input `,` $weight attr-dict `:` type($input) `->` type($values) `,` type($scales)
  }];
}

def Attn_SwiGLUQuantOp : Attn_Op<"swiglu_quant", [Pure, AllTypesMatch<["gate", "up"]>]> {
  let summary = "SwiGLU fused with the FP8 rowwise quantization of its output";
  let description = [{
    attn.swiglu followed by attn.quantize of its result, as one op; the
    product is quantized from its f32 value, not rounded to the gate's
    element type first.
  }];
  let arguments = (ins Attn_Activation:$gate, Attn_Activation:$up);
  let results = (outs Attn_FP8Activation:$values, Attn_RowScales:$scales);
  let assemblyFormat = [{
    $gate `,` $up attr-dict `:` type($gate) `->` type($values) `,` type($scales)
  }];
}

def Attn_AttentionOp : Attn_Op<"attention"> {
  let summary = "Multi-head attention of one layer over the paged KV cache";
  let description = [{
    For each token t of the step (at position p in its sequence): applies the
    `position` encoding to q[t] and k[t], appends k[t] and v[t] to the
    layer's KV-cache slot `kv_slot` at position p, then attends over the
    cached keys of its own sequence: every j <= p for `#attn.full`,
    p - W < j <= p for `#attn.sliding<W>`. Query head h reads KV head
    h / (num_heads / num_kv_heads) (GQA); scores scaled by 1/sqrt(head_dim).
    q [tokens, num_heads*head_dim], k and v [tokens, num_kv_heads*head_dim],
    positions [tokens], result [tokens, num_heads*head_dim].
    Writes the KV cache: not pure.
  }];
  let arguments = (ins Attn_Activation:$q, Attn_Activation:$k, Attn_Activation:$v,
                       Attn_TokenVector:$positions,
                       ConfinedAttr<I64Attr, [IntPositive]>:$num_heads,
                       ConfinedAttr<I64Attr, [IntPositive]>:$num_kv_heads,
                       ConfinedAttr<I64Attr, [IntPositive]>:$head_dim,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$kv_slot,
                       Attn_WindowAttr:$window, Attn_PositionAttr:$position);
  let results = (outs Attn_Activation:$result);
  let assemblyFormat = [{
    $q `,` $k `,` $v `,` $positions attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The window in tokens for a sliding layer, std::nullopt for a full one.
    std::optional<int64_t> getSlidingWindow();
    bool hasRope() { return ::llvm::isa<RopeAttr>(getPosition()); }
  }];
}

def Attn_SwiGLUOp : Attn_Op<"swiglu", [Pure, SameOperandsAndResultType]> {
  let summary = "SwiGLU: silu(gate) * up, elementwise";
  let arguments = (ins Attn_Activation:$gate, Attn_Activation:$up);
  let results = (outs Attn_Activation:$result);
  let assemblyFormat = "$gate `,` $up attr-dict `:` type($result)";
}

def Attn_ResidualSumOp : Attn_Op<"residual_sum", [Pure, SameOperandsAndResultShape]> {
  let summary = "The parallel block's residual: x + attention + mlp";
  let description = [{
    Elementwise sum in f32, rounded once to the result's element type (the
    residual stream may be kept in f32 while its addends are bf16).
  }];
  let arguments = (ins Variadic<Attn_Activation>:$inputs);
  let results = (outs Attn_Activation:$result);
  let assemblyFormat = "$inputs attr-dict `:` type($inputs) `->` type($result)";
  let hasVerifier = 1;
}

def Attn_LogitsOp : Attn_Op<"logits", [Pure, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Output logits from the tied embedding: (x @ weight^T) * scale";
  let description = [{
    input [tokens, hidden] (after the final norm), weight [vocab, hidden]
    (the embedding, tied), result [tokens, vocab] in f32. Only the rows the
    runtime asks for are computed.
  }];
  let arguments = (ins Attn_Activation:$input, FlatSymbolRefAttr:$weight, F64Attr:$scale);
  let results = (outs 2DTensorOf<[F32]>:$result);
  let assemblyFormat = "$input `,` $weight attr-dict `:` type($input) `->` type($result)";
}

#endif // COHERE2C_ATTN_OPS
