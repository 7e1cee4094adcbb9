// RUN: cohere2c-opt %s --attn-fuse-norm-quant | FileCheck %s

// Before: a layer norm whose output is quantized. After: one
// layer_norm_quant (one kernel writing FP8 values and a scale per token);
// the unused layer norm is gone.
module {
  attn.weight @ln : tensor<64xbf16> at 0
  // CHECK-LABEL: func.func @fused
  func.func @fused(%x: tensor<?x64xf32>) -> (tensor<?x64xf8E4M3FN>, tensor<?xf32>) {
    // CHECK-NOT: attn.layer_norm %
    // CHECK: %{{.*}}, %{{.*}} = attn.layer_norm_quant %{{.*}}, @ln {eps = 1.000000e-05 : f64, norm_type = bf16} : tensor<?x64xf32> -> tensor<?x64xf8E4M3FN>, tensor<?xf32>
    // CHECK-NOT: attn.quantize
    %h = attn.layer_norm %x, @ln {eps = 1.0e-5 : f64} : tensor<?x64xf32> -> tensor<?x64xbf16>
    %q, %s = attn.quantize %h : tensor<?x64xbf16> -> tensor<?x64xf8E4M3FN>, tensor<?xf32>
    return %q, %s : tensor<?x64xf8E4M3FN>, tensor<?xf32>
  }

  // A layer norm with another use stays for it.
  // CHECK-LABEL: func.func @shared
  func.func @shared(%x: tensor<?x64xf32>) -> (tensor<?x64xf8E4M3FN>, tensor<?x64xbf16>) {
    // CHECK-DAG: attn.layer_norm_quant
    // CHECK-DAG: attn.layer_norm %
    %h = attn.layer_norm %x, @ln {eps = 1.0e-5 : f64} : tensor<?x64xf32> -> tensor<?x64xbf16>
    %q, %s = attn.quantize %h : tensor<?x64xbf16> -> tensor<?x64xf8E4M3FN>, tensor<?xf32>
    return %q, %h : tensor<?x64xf8E4M3FN>, tensor<?x64xbf16>
  }
}
