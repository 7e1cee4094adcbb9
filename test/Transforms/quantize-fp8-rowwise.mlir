// RUN: cohere2c-opt %s --attn-quantize-fp8-rowwise --cse | FileCheck %s

// Before: three linear layers with FP8 weights read the same normalized
// input. After: one per-token quantize of it, shared by three fp8_linear
// ops; a linear layer with a bf16 weight is left alone.
module {
  attn.weight @ln : tensor<64xbf16> at 0
  attn.weight @q : tensor<64x64xf8E4M3FN> at 256
  attn.weight @q_scale : tensor<64xf32> at 4352
  attn.weight @k : tensor<32x64xf8E4M3FN> at 4608
  attn.weight @k_scale : tensor<32xf32> at 6656
  attn.weight @o : tensor<64x64xf8E4M3FN> at 6912
  attn.weight @o_scale : tensor<64xf32> at 11008
  attn.weight @dense : tensor<64x64xbf16> at 11264

  // CHECK-LABEL: func.func @step
  func.func @step(%x: tensor<?x64xf32>) -> (tensor<?x64xbf16>, tensor<?x32xbf16>, tensor<?x64xf32>, tensor<?x64xbf16>) {
    // CHECK: %[[H:.*]] = attn.layer_norm
    %h = attn.layer_norm %x, @ln {eps = 1.0e-5 : f64} : tensor<?x64xf32> -> tensor<?x64xbf16>
    // CHECK: %[[Q:.*]], %[[S:.*]] = attn.quantize %[[H]] : tensor<?x64xbf16> -> tensor<?x64xf8E4M3FN>, tensor<?xf32>
    // CHECK-NOT: attn.quantize %[[H]]
    // CHECK: attn.fp8_linear %[[Q]], %[[S]], @q scale @q_scale : tensor<?x64xf8E4M3FN>, tensor<?xf32> -> tensor<?x64xbf16>
    %q = attn.linear %h, @q scale @q_scale : tensor<?x64xbf16> -> tensor<?x64xbf16>
    // CHECK: attn.fp8_linear %[[Q]], %[[S]], @k scale @k_scale : tensor<?x64xf8E4M3FN>, tensor<?xf32> -> tensor<?x32xbf16>
    %k = attn.linear %h, @k scale @k_scale : tensor<?x64xbf16> -> tensor<?x32xbf16>
    // The f32 output of a residual projection is kept.
    // CHECK: attn.fp8_linear %[[Q]], %[[S]], @o scale @o_scale : tensor<?x64xf8E4M3FN>, tensor<?xf32> -> tensor<?x64xf32>
    %o = attn.linear %h, @o scale @o_scale : tensor<?x64xbf16> -> tensor<?x64xf32>
    // CHECK: attn.linear %[[H]], @dense : tensor<?x64xbf16> -> tensor<?x64xbf16>
    %d = attn.linear %h, @dense : tensor<?x64xbf16> -> tensor<?x64xbf16>
    return %q, %k, %o, %d : tensor<?x64xbf16>, tensor<?x32xbf16>, tensor<?x64xf32>, tensor<?x64xbf16>
  }
}
