//===- AttnAttrs.td - Per-layer attention attributes -------*- tablegen -*-===//
#ifndef COHERE2C_ATTN_ATTRS
#define COHERE2C_ATTN_ATTRS

include "cohere2c/Dialect/Attn/IR/AttnBase.td"

def Attn_SlidingWindowAttr : Attn_Attr<"SlidingWindow", "sliding"> {
  let summary = "Sliding-window attention: the query at p sees keys p - W < j <= p";
  let parameters = (ins "int64_t":$size);
  let assemblyFormat = "`<` $size `>`";
  let genVerifyDecl = 1;
}

def Attn_FullWindowAttr : Attn_Attr<"FullWindow", "full"> {
  let summary = "Full causal attention: the query at p sees every key j <= p";
}

def Attn_RopeAttr : Attn_Attr<"Rope", "rope"> {
  let summary = "Rotary position embedding";
  let description = [{
    Rotates pairs of q and k features by the angle p * theta^(-2m/head_dim)
    for pair m at position p (Su et al., RoFormer). `interleaved` pairs
    (x[2m], x[2m+1]) as GPT-J and Cohere do; without it, pairs would be
    (x[m], x[m + head_dim/2]) as in Llama. Only interleaved pairing is
    implemented (both lowerings rotate (x[2m], x[2m+1])), so the verifier
    rejects a rope without `interleaved` rather than let it be compiled as
    the other pairing. The flag stays in the syntax so that a module says
    which pairing it means.
  }];
  let parameters = (ins "::llvm::APFloat":$theta, "bool":$interleaved);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

def Attn_NoPositionAttr : Attn_Attr<"NoPosition", "none"> {
  let summary = "No position encoding (Cohere2's global attention layers)";
}

def Attn_WindowAttr : AnyAttrOf<[Attn_SlidingWindowAttr, Attn_FullWindowAttr]>;
def Attn_PositionAttr : AnyAttrOf<[Attn_RopeAttr, Attn_NoPositionAttr]>;

#endif // COHERE2C_ATTN_ATTRS
