// RUN: cohere2c-opt %s --convert-attn-to-host -split-input-file -verify-diagnostics

module {
  // expected-error @+1 {{the host target computes in f32 or fp8-rowwise; compile with --precision f32 or fp8-rowwise}}
  attn.weight @e : tensor<16x8xbf16> at 0
  func.func @cohere2c_step(%ids: tensor<?xi32>, %pos: tensor<?xi32>) -> tensor<?x16xf32> {
    %x = attn.embedding %ids, @e : tensor<?xi32> -> tensor<?x8xbf16>
    %l = attn.logits %x, @e {scale = 1.0 : f64} : tensor<?x8xbf16> -> tensor<?x16xf32>
    return %l : tensor<?x16xf32>
  }
}

// -----

// expected-error @+1 {{no @cohere2c_step to lower}}
module {
  func.func @other() {
    return
  }
}

// -----

module {
  attn.weight @w : tensor<16x8xf8E4M3FN> at 0
  attn.weight @s : tensor<16xf32> at 256
  func.func @cohere2c_step(%ids: tensor<?xi32>, %pos: tensor<?xi32>) -> tensor<?x16xf32> {
    %x = arith.constant dense<0.0> : tensor<1x8xf32>
    %c = tensor.cast %x : tensor<1x8xf32> to tensor<?x8xf32>
    // expected-error @+1 {{has an fp8 weight: run attn-quantize-fp8-rowwise first}}
    %y = attn.linear %c, @w scale @s : tensor<?x8xf32> -> tensor<?x16xf32>
    return %y : tensor<?x16xf32>
  }
}
