// RUN: cohere2c-opt %s | FileCheck %s
// RUN: cohere2c-opt %s | cohere2c-opt | FileCheck %s

module {
  // CHECK: attn.weight @embed : tensor<512x128xf32> at 0
  attn.weight @embed : tensor<512x128xf32> at 0
  attn.weight @ln : tensor<128xf32> at 262144
  attn.weight @q : tensor<128x128xf32> at 262656
  attn.weight @kv : tensor<64x128xf32> at 328192
  attn.weight @gate : tensor<256x128xf32> at 360960
  attn.weight @down : tensor<128x256xf32> at 492032

  // The residual stream in f32 around bf16 activations.
  attn.weight @ln16 : tensor<128xbf16> at 0
  // CHECK-LABEL: func.func @mixed
  func.func @mixed(%x: tensor<?x128xf32>, %a: tensor<?x128xbf16>) -> tensor<?x128xf32> {
    // CHECK: attn.layer_norm %{{.*}}, @ln16 {eps = 1.000000e-05 : f64} : tensor<?x128xf32> -> tensor<?x128xbf16>
    %h = attn.layer_norm %x, @ln16 {eps = 1.0e-5 : f64} : tensor<?x128xf32> -> tensor<?x128xbf16>
    // CHECK: attn.residual_sum %{{.*}}, %{{.*}}, %{{.*}} : tensor<?x128xf32>, tensor<?x128xbf16>, tensor<?x128xbf16> -> tensor<?x128xf32>
    %y = attn.residual_sum %x, %h, %a : tensor<?x128xf32>, tensor<?x128xbf16>, tensor<?x128xbf16> -> tensor<?x128xf32>
    return %y : tensor<?x128xf32>
  }

  // CHECK-LABEL: func.func @layer
  func.func @layer(%ids: tensor<?xi32>, %pos: tensor<?xi32>) -> tensor<?x512xf32> {
    // CHECK: attn.embedding %{{.*}}, @embed : tensor<?xi32> -> tensor<?x128xf32>
    %x = attn.embedding %ids, @embed : tensor<?xi32> -> tensor<?x128xf32>
    // CHECK: attn.layer_norm %{{.*}}, @ln {eps = 1.000000e-05 : f64} : tensor<?x128xf32> -> tensor<?x128xf32>
    %h = attn.layer_norm %x, @ln {eps = 1.0e-5 : f64} : tensor<?x128xf32> -> tensor<?x128xf32>
    // CHECK: attn.linear %{{.*}}, @q : tensor<?x128xf32> -> tensor<?x128xf32>
    %q = attn.linear %h, @q : tensor<?x128xf32> -> tensor<?x128xf32>
    %k = attn.linear %h, @kv : tensor<?x128xf32> -> tensor<?x64xf32>
    %v = attn.linear %h, @kv : tensor<?x128xf32> -> tensor<?x64xf32>
    // CHECK: attn.attention {{.*}} {head_dim = 32 : i64, kv_slot = 0 : i64, num_heads = 4 : i64, num_kv_heads = 2 : i64, position = #attn.rope<theta = 5.000000e+04, interleaved>, window = #attn.sliding<8>}
    %a = attn.attention %q, %k, %v, %pos {num_heads = 4, num_kv_heads = 2, head_dim = 32, kv_slot = 0,
        window = #attn.sliding<8>, position = #attn.rope<theta = 5.0e4, interleaved>}
        : (tensor<?x128xf32>, tensor<?x64xf32>, tensor<?x64xf32>, tensor<?xi32>) -> tensor<?x128xf32>
    // CHECK: attn.attention {{.*}} position = #attn.none, window = #attn.full}
    %a2 = attn.attention %q, %k, %v, %pos {num_heads = 4, num_kv_heads = 2, head_dim = 32, kv_slot = 1,
        window = #attn.full, position = #attn.none}
        : (tensor<?x128xf32>, tensor<?x64xf32>, tensor<?x64xf32>, tensor<?xi32>) -> tensor<?x128xf32>
    %g = attn.linear %h, @gate : tensor<?x128xf32> -> tensor<?x256xf32>
    // CHECK: attn.swiglu %{{.*}}, %{{.*}} : tensor<?x256xf32>
    %m = attn.swiglu %g, %g : tensor<?x256xf32>
    %d = attn.linear %m, @down : tensor<?x256xf32> -> tensor<?x128xf32>
    // CHECK: attn.residual_sum %{{.*}}, %{{.*}}, %{{.*}} : tensor<?x128xf32>, tensor<?x128xf32>, tensor<?x128xf32> -> tensor<?x128xf32>
    %y = attn.residual_sum %x, %a, %d : tensor<?x128xf32>, tensor<?x128xf32>, tensor<?x128xf32> -> tensor<?x128xf32>
    %y2 = attn.residual_sum %y, %a2 : tensor<?x128xf32>, tensor<?x128xf32> -> tensor<?x128xf32>
    // CHECK: attn.logits %{{.*}}, @embed {scale = 2.500000e-01 : f64} : tensor<?x128xf32> -> tensor<?x512xf32>
    %l = attn.logits %y2, @embed {scale = 0.25 : f64} : tensor<?x128xf32> -> tensor<?x512xf32>
    return %l : tensor<?x512xf32>
  }
}
