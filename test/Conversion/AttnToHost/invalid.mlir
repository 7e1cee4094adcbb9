// RUN: cohere2c-opt %s --convert-attn-to-host -split-input-file -verify-diagnostics

module {
  // expected-error @+1 {{the host target computes in f32; compile with --precision f32}}
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
