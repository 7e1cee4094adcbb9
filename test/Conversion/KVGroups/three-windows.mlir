// RUN: cohere2c-opt %s --convert-attn-to-host | FileCheck %s --check-prefix=HOST
// RUN: cohere2c-opt %s --convert-attn-to-gpu | FileCheck %s --check-prefix=CUDA

// KV groups of equal size: the windows hold 1 (full), 2 (window 4) and 1
// (window 8) layers, so every group holds gcd(1, 2, 1) = 1 layer. Ordered by
// window with the full layers' first, then by first layer: full (kv_slot 2)
// is group 0, window 4 groups 1 (kv_slot 1) and 2 (kv_slot 3), window 8
// (kv_slot 0) group 3. A layer's slot in its group is its rank by kv_slot
// there: 0 in every group of one layer.

module {
  attn.weight @e : tensor<16x64xf32> at 0
  func.func @cohere2c_step(%ids: tensor<?xi32>, %pos: tensor<?xi32>) -> tensor<?x16xf32> {
    %x = attn.embedding %ids, @e : tensor<?xi32> -> tensor<?x64xf32>
    %a = attn.attention %x, %x, %x, %pos {num_heads = 2, num_kv_heads = 2, head_dim = 32, kv_slot = 0,
        window = #attn.sliding<8>, position = #attn.none}
        : (tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>, tensor<?xi32>) -> tensor<?x64xf32>
    %b = attn.attention %a, %a, %a, %pos {num_heads = 2, num_kv_heads = 2, head_dim = 32, kv_slot = 1,
        window = #attn.sliding<4>, position = #attn.none}
        : (tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>, tensor<?xi32>) -> tensor<?x64xf32>
    %c = attn.attention %b, %b, %b, %pos {num_heads = 2, num_kv_heads = 2, head_dim = 32, kv_slot = 2,
        window = #attn.full, position = #attn.none}
        : (tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>, tensor<?xi32>) -> tensor<?x64xf32>
    %d = attn.attention %c, %c, %c, %pos {num_heads = 2, num_kv_heads = 2, head_dim = 32, kv_slot = 3,
        window = #attn.sliding<4>, position = #attn.none}
        : (tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>, tensor<?xi32>) -> tensor<?x64xf32>
    %l = attn.logits %d, @e {scale = 1.0 : f64} : tensor<?x64xf32> -> tensor<?x16xf32>
    return %l : tensor<?x16xf32>
  }
}

// The host step takes every group's block tables as one [G, S, blocks]
// array and the one pool they all draw from; a layer reads its group's
// table (the first index) and writes and reads the pool at the block that
// table names.
// HOST-LABEL: func.func @cohere2c_step(
// HOST-SAME: %[[TABLES:[a-z0-9]+]]: memref<?x?x?xi32>, %[[POOL:[a-z0-9]+]]: memref<?xf32>, %[[ROWS:[a-z0-9]+]]: memref<?xi32>
// HOST-NOT: memref<?xi64>
// HOST: memref.load %[[TABLES]][%[[G3:c3[_0-9]*]], %{{.+}}, %{{.+}}] : memref<?x?x?xi32>
// HOST: memref.store %{{.+}}, %[[POOL]][%{{.+}}] : memref<?xf32>
// HOST: memref.load %[[TABLES]][%[[G1:c1[_0-9]*]], %{{.+}}, %{{.+}}] : memref<?x?x?xi32>
// HOST: memref.load %[[TABLES]][%[[G0:c0[_0-9]*]], %{{.+}}, %{{.+}}] : memref<?x?x?xi32>
// HOST: memref.load %[[TABLES]][%[[G2:c2[_0-9]*]], %{{.+}}, %{{.+}}] : memref<?x?x?xi32>

// The cuda plan names each group's tables and the one pool, and every
// group's tables have the width table_width; the slot (the constant after
// the pool) is the layer's rank in its group, and the kernels are
// specialized on the group's window and number of layers (_l1).
// CUDA: plan.launch @cohere2c_kernels::@kv_append_no_rope_h2_kv2_d32_l1 {{.*}} [{{.*}}#plan.input<kv_tables, group = 3>, #plan.input<kv_pool>, 0, #plan.param<block_size>, #plan.param<table_width>]
// CUDA: plan.launch @cohere2c_kernels::@attention_sliding8_h2_kv2_d32_l1 {{.*}}#plan.input<kv_tables, group = 3>, #plan.input<kv_pool>, {{.*}}, 0, #plan.param<block_size>, #plan.param<table_width>
// CUDA: plan.launch @cohere2c_kernels::@kv_append_no_rope_h2_kv2_d32_l1 {{.*}} [{{.*}}#plan.input<kv_tables, group = 1>, #plan.input<kv_pool>, 0, #plan.param<block_size>, #plan.param<table_width>]
// CUDA: plan.launch @cohere2c_kernels::@attention_sliding4_h2_kv2_d32_l1 {{.*}}#plan.input<kv_tables, group = 1>, #plan.input<kv_pool>, {{.*}}, 0, #plan.param<block_size>, #plan.param<table_width>
// CUDA: plan.launch @cohere2c_kernels::@kv_append_no_rope_h2_kv2_d32_l1 {{.*}} [{{.*}}#plan.input<kv_tables, group = 0>, #plan.input<kv_pool>, 0, #plan.param<block_size>, #plan.param<table_width>]
// CUDA: plan.launch @cohere2c_kernels::@attention_full_h2_kv2_d32_l1 {{.*}}#plan.input<kv_tables, group = 0>, #plan.input<kv_pool>, {{.*}}, 0, #plan.param<block_size>, #plan.param<table_width>
// CUDA: plan.launch @cohere2c_kernels::@kv_append_no_rope_h2_kv2_d32_l1 {{.*}} [{{.*}}#plan.input<kv_tables, group = 2>, #plan.input<kv_pool>, 0, #plan.param<block_size>, #plan.param<table_width>]
// CUDA: plan.launch @cohere2c_kernels::@attention_sliding4_h2_kv2_d32_l1 {{.*}}#plan.input<kv_tables, group = 2>, #plan.input<kv_pool>, {{.*}}, 0, #plan.param<block_size>, #plan.param<table_width>
