// RUN: cohere2c-opt %s --convert-attn-to-host | FileCheck %s

// A sliding layer's attention gets rotary code (cos/sin of the angle) and
// the window bound; a full layer's attention gets neither.

module {
  attn.weight @e : tensor<16x8xf32> at 0
  // CHECK-LABEL: func.func @cohere2c_step(
  // CHECK-SAME: memref<?xi8>, %{{.*}}: memref<?xi32>, %{{.*}}: memref<?xi32>, %{{.*}}: memref<?xi32>, %{{.*}}: memref<?x?x?xi32>, %{{.*}}: memref<?xf32>, %{{.*}}: memref<?xi32>, %{{.*}}: memref<?x?xf32>, %{{.*}}: i64) attributes {llvm.emit_c_interface}
  func.func @cohere2c_step(%ids: tensor<?xi32>, %pos: tensor<?xi32>) -> tensor<?x16xf32> {
    // CHECK: memref.view %{{.*}}[%{{.*}}][] : memref<?xi8> to memref<16x8xf32>
    %x = attn.embedding %ids, @e : tensor<?xi32> -> tensor<?x8xf32>
    // Sliding: K rotated on append, q rotated, keys from max(0, p - 4 + 1).
    // CHECK: math.cos
    // CHECK: math.sin
    // CHECK: arith.maxsi
    // CHECK: math.exp
    %s = attn.attention %x, %x, %x, %pos {num_heads = 2, num_kv_heads = 2, head_dim = 4, kv_slot = 0,
        window = #attn.sliding<4>, position = #attn.rope<theta = 1.0e4, interleaved>}
        : (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?xi32>) -> tensor<?x8xf32>
    // CHECK: memref.dealloc
    // Full: from the first key, no rotation.
    // CHECK-NOT: math.cos
    // CHECK-NOT: math.sin
    // CHECK-NOT: arith.maxsi
    // CHECK: math.exp
    %f = attn.attention %s, %s, %s, %pos {num_heads = 2, num_kv_heads = 2, head_dim = 4, kv_slot = 1,
        window = #attn.full, position = #attn.none}
        : (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?xi32>) -> tensor<?x8xf32>
    %l = attn.logits %f, @e {scale = 1.0 : f64} : tensor<?x8xf32> -> tensor<?x16xf32>
    // CHECK-NOT: attn.
    // CHECK: return
    return %l : tensor<?x16xf32>
  }
}
