// RUN: cohere2c-opt %s --attn-fuse-swiglu-quant | FileCheck %s

// Before: SwiGLU, then the down projection's per-token quantization of it.
// After: one swiglu_quant.
// CHECK-LABEL: func.func @mlp
func.func @mlp(%g: tensor<?x256xbf16>, %u: tensor<?x256xbf16>) -> (tensor<?x256xf8E4M3FN>, tensor<?xf32>) {
  // CHECK-NOT: attn.swiglu %
  // CHECK: %{{.*}}, %{{.*}} = attn.swiglu_quant %{{.*}}, %{{.*}} : tensor<?x256xbf16> -> tensor<?x256xf8E4M3FN>, tensor<?xf32>
  // CHECK-NOT: attn.quantize
  %m = attn.swiglu %g, %u : tensor<?x256xbf16>
  %q, %s = attn.quantize %m : tensor<?x256xbf16> -> tensor<?x256xf8E4M3FN>, tensor<?xf32>
  return %q, %s : tensor<?x256xf8E4M3FN>, tensor<?xf32>
}
