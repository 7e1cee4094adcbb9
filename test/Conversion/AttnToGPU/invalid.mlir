// RUN: cohere2c-opt %s --convert-attn-to-gpu -split-input-file -verify-diagnostics

// An attn.linear whose weight is FP8 (with its scales) but whose input is
// bf16: the cuda kernels would read the e4m3 bytes as bf16.
module {
  attn.weight @w : tensor<16x8xf8E4M3FN> at 0
  attn.weight @s : tensor<16xf32> at 256
  func.func @cohere2c_step(%ids: tensor<?xi32>, %pos: tensor<?xi32>) -> tensor<?x16xbf16> {
    %x = arith.constant dense<0.0> : tensor<1x8xbf16>
    %c = tensor.cast %x : tensor<1x8xbf16> to tensor<?x8xbf16>
    // expected-error @+1 {{has an fp8 weight: run attn-quantize-fp8-rowwise first}}
    %y = attn.linear %c, @w scale @s : tensor<?x8xbf16> -> tensor<?x16xbf16>
    return %y : tensor<?x16xbf16>
  }
}
