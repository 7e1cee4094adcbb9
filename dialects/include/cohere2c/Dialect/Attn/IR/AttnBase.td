//===- AttnBase.td - The attn dialect ----------------------*- tablegen -*-===//
//
// The Cohere2 model at the granularity of one transformer layer's pieces.
// What differs between layers (the attention window, the position encoding)
// is an attribute on the op, so that kernels are specialized at compile time.
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_ATTN_BASE
#define COHERE2C_ATTN_BASE

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def Attn_Dialect : Dialect {
  let name = "attn";
  let cppNamespace = "::mlir::cohere2c::attn";
  let summary = "Cohere2 transformer layers with per-layer window and position attributes";
  let description = [{
    Ops over activations of shape [tokens, features] (tokens dynamic: the
    tokens of one model step, prefill chunks and decode tokens alike).
    Weights are module-level `attn.weight` symbols; ops refer to them by name.
    An attention op carries its layer's KV-cache slot, its `window`
    (`#attn.sliding<W>` or `#attn.full`) and its `position` encoding
    (`#attn.rope<theta = ..., interleaved>` or `#attn.none`).
  }];
  let useDefaultAttributePrinterParser = 1;
}

class Attn_Op<string mnemonic, list<Trait> traits = []>
    : Op<Attn_Dialect, mnemonic, traits>;

class Attn_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Attn_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

#endif // COHERE2C_ATTN_BASE
