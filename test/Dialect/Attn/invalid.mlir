// RUN: cohere2c-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{sliding window must be at least 1 token, found 0}}
func.func private @f() attributes {w = #attn.sliding<0>}

// -----

// expected-error @+1 {{rope theta must be positive and finite, found -1.000000e+00}}
func.func private @f() attributes {p = #attn.rope<theta = -1.0, interleaved>}

// -----

// expected-error @+1 {{rope must be interleaved: only interleaved pairing (x[2m], x[2m+1]) is implemented, not the half-split pairing (x[m], x[m + head_dim/2])}}
func.func private @f() attributes {p = #attn.rope<theta = 1.0e4>}

// -----

func.func @half_split_rope(%q: tensor<?x64xf32>, %kv: tensor<?x32xf32>, %pos: tensor<?xi32>) {
  %a = attn.attention %q, %kv, %kv, %pos {num_heads = 2, num_kv_heads = 1, head_dim = 32, kv_slot = 0,
      // expected-error @+1 {{rope must be interleaved}}
      window = #attn.sliding<4>, position = #attn.rope<theta = 1.0e4>}
      : (tensor<?x64xf32>, tensor<?x32xf32>, tensor<?x32xf32>, tensor<?xi32>) -> tensor<?x64xf32>
  return
}

// -----

func.func @gqa(%q: tensor<?x96xf32>, %kv: tensor<?x64xf32>, %pos: tensor<?xi32>) {
  // expected-error @+1 {{num_kv_heads (2) must divide num_heads (3)}}
  %a = attn.attention %q, %kv, %kv, %pos {num_heads = 3, num_kv_heads = 2, head_dim = 32, kv_slot = 0,
      window = #attn.full, position = #attn.none}
      : (tensor<?x96xf32>, tensor<?x64xf32>, tensor<?x64xf32>, tensor<?xi32>) -> tensor<?x96xf32>
  return
}

// -----

func.func @q_width(%q: tensor<?x100xf32>, %kv: tensor<?x64xf32>, %pos: tensor<?xi32>) {
  // expected-error @+1 {{q has 100 features, expected 128}}
  %a = attn.attention %q, %kv, %kv, %pos {num_heads = 4, num_kv_heads = 2, head_dim = 32, kv_slot = 0,
      window = #attn.full, position = #attn.none}
      : (tensor<?x100xf32>, tensor<?x64xf32>, tensor<?x64xf32>, tensor<?xi32>) -> tensor<?x100xf32>
  return
}

// -----

func.func @odd_rope(%q: tensor<?x66xf32>, %kv: tensor<?x33xf32>, %pos: tensor<?xi32>) {
  // expected-error @+1 {{rope needs an even head_dim, found 33}}
  %a = attn.attention %q, %kv, %kv, %pos {num_heads = 2, num_kv_heads = 1, head_dim = 33, kv_slot = 0,
      window = #attn.sliding<4>, position = #attn.rope<theta = 1.0e4, interleaved>}
      : (tensor<?x66xf32>, tensor<?x33xf32>, tensor<?x33xf32>, tensor<?xi32>) -> tensor<?x66xf32>
  return
}

// -----

func.func @bad_window(%q: tensor<?x64xf32>, %pos: tensor<?xi32>) {
  // expected-error @+1 {{attribute 'window' failed to satisfy constraint}}
  %a = attn.attention %q, %q, %q, %pos {num_heads = 2, num_kv_heads = 2, head_dim = 32, kv_slot = 0,
      window = 4 : i64, position = #attn.none}
      : (tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>, tensor<?xi32>) -> tensor<?x64xf32>
  return
}

// -----

func.func @bad_position(%q: tensor<?x64xf32>, %pos: tensor<?xi32>) {
  // expected-error @+1 {{attribute 'position' failed to satisfy constraint}}
  %a = attn.attention %q, %q, %q, %pos {num_heads = 2, num_kv_heads = 2, head_dim = 32, kv_slot = 0,
      window = #attn.full, position = #attn.sliding<3>}
      : (tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>, tensor<?xi32>) -> tensor<?x64xf32>
  return
}

// -----

func.func @tokens(%q: tensor<3x64xf32>, %k: tensor<4x64xf32>, %pos: tensor<?xi32>) {
  // expected-error @+1 {{operands disagree on the number of tokens: 3 and 4}}
  %a = attn.attention %q, %k, %k, %pos {num_heads = 2, num_kv_heads = 2, head_dim = 32, kv_slot = 0,
      window = #attn.full, position = #attn.none}
      : (tensor<3x64xf32>, tensor<4x64xf32>, tensor<4x64xf32>, tensor<?xi32>) -> tensor<3x64xf32>
  return
}

// -----

module {
  attn.weight @w : tensor<64x100xf32> at 0
  func.func @linear_shape(%x: tensor<?x128xf32>) {
    // expected-error @+1 {{weight @w has shape [64, 100], expected [64, 128]}}
    %y = attn.linear %x, @w : tensor<?x128xf32> -> tensor<?x64xf32>
    return
  }
}

// -----

module {
  attn.weight @w : tensor<64x128xbf16> at 0
  func.func @linear_dtype(%x: tensor<?x128xf32>) {
    // expected-error @+1 {{weight @w has element type 'bf16', expected 'f32'}}
    %y = attn.linear %x, @w : tensor<?x128xf32> -> tensor<?x64xf32>
    return
  }
}

// -----

module {
  func.func @missing_weight(%x: tensor<?x128xf32>) {
    // expected-error @+1 {{refers to @nope, which is not an attn.weight}}
    %y = attn.layer_norm %x, @nope {eps = 1.0e-5 : f64} : tensor<?x128xf32> -> tensor<?x128xf32>
    return
  }
}

// -----

module {
  attn.weight @e : tensor<512x64xf32> at 0
  func.func @embedding_width(%ids: tensor<?xi32>) {
    // expected-error @+1 {{weight @e has shape [512, 64], expected [?, 128]}}
    %x = attn.embedding %ids, @e : tensor<?xi32> -> tensor<?x128xf32>
    return
  }
}

// -----

module {
  attn.weight @e : tensor<512x128xf32> at 0
  func.func @logits_vocab(%x: tensor<?x128xf32>) {
    // expected-error @+1 {{weight @e has shape [512, 128], expected [500, 128]}}
    %l = attn.logits %x, @e {scale = 1.0 : f64} : tensor<?x128xf32> -> tensor<?x500xf32>
    return
  }
}

// -----

func.func @residual(%x: tensor<?x128xf32>) {
  // expected-error @+1 {{needs at least two inputs, found 1}}
  %y = attn.residual_sum %x : tensor<?x128xf32> -> tensor<?x128xf32>
  return
}

// -----

// expected-error @+1 {{attribute 'offset' failed to satisfy constraint: 64-bit signless integer attribute whose value is non-negative}}
attn.weight @w : tensor<4xf32> at -4

// -----

func.func @residual_shapes(%x: tensor<?x128xf32>, %y: tensor<?x64xbf16>) {
  // expected-error @+1 {{requires the same shape for all operands and results}}
  %z = attn.residual_sum %x, %y : tensor<?x128xf32>, tensor<?x64xbf16> -> tensor<?x128xf32>
  return
}

// -----

func.func @shared_slot(%q: tensor<?x64xf32>, %pos: tensor<?xi32>) {
  // expected-error @+1 {{kv_slot 3 is also another attention op's: each layer needs its own}}
  %a = attn.attention %q, %q, %q, %pos {num_heads = 2, num_kv_heads = 2, head_dim = 32, kv_slot = 3,
      window = #attn.full, position = #attn.none}
      : (tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>, tensor<?xi32>) -> tensor<?x64xf32>
  %b = attn.attention %a, %q, %q, %pos {num_heads = 2, num_kv_heads = 2, head_dim = 32, kv_slot = 3,
      window = #attn.full, position = #attn.none}
      : (tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>, tensor<?xi32>) -> tensor<?x64xf32>
  return
}

// -----

func.func @huge_heads(%q: tensor<?x8xf32>, %pos: tensor<?xi32>) {
  // expected-error @+1 {{num_heads x head_dim must be at most 2147483648, found 4611686018427387906 x 4}}
  %a = attn.attention %q, %q, %q, %pos {num_heads = 4611686018427387906, num_kv_heads = 2, head_dim = 4,
      kv_slot = 0, window = #attn.full, position = #attn.none}
      : (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?xi32>) -> tensor<?x8xf32>
  return
}
