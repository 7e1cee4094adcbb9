// RUN: cohere2c-opt %s | cohere2c-opt | FileCheck %s

// Every form of argument and step prints as it parses.
// CHECK-LABEL: plan.step {
// CHECK-NEXT: plan.buffer @b0 : 768 x bf16, rows <tokens>
// CHECK-NEXT: plan.buffer @b1 : 136 x f32, rows <decode_split_blocks>
// CHECK-NEXT: plan.gemm "w.q" m(<gemm_tokens>) n(768) k(128) alpha(1.000000e+00) [#plan.view<@b0>, #plan.view<@b0>]
// CHECK-NEXT: plan.fork
// CHECK-NEXT: plan.launch @k::@append <kv_append, strides = [768, 768]> grid(<tokens>, 1) block(256) [#plan.view<@b0[0, 128]>, #plan.view<@b0[128, 64]>, #plan.input<kv_pool>, 3, #plan.param<block_size>, #plan.weight<"w.q", 98304>]
// CHECK-NEXT: plan.gemm "w.d" scaled "w.d_scale" m(<rows>) n(8) k(8) alpha(2.500000e-01) [#plan.view<@b1>, #plan.input<logits>, #plan.view<@b1>] {side}
// CHECK-NEXT: plan.join
module {
  plan.step {
    plan.buffer @b0 : 768 x bf16, rows <tokens>
    plan.buffer @b1 : 136 x f32, rows <decode_split_blocks>
    plan.gemm "w.q" m(<gemm_tokens>) n(768) k(128) alpha(1.0) [#plan.view<@b0>, #plan.view<@b0>]
    plan.fork
    plan.launch @k::@append <kv_append, strides = [768, 768]> grid(<tokens>, 1) block(256) [#plan.view<@b0[0, 128]>, #plan.view<@b0[128, 64]>, #plan.input<kv_pool>, 3, #plan.param<block_size>, #plan.weight<"w.q", 98304>]
    plan.gemm "w.d" scaled "w.d_scale" m(<rows>) n(8) k(8) alpha(0.25) [#plan.view<@b1>, #plan.input<logits>, #plan.view<@b1>] {side}
    plan.join
  }
}
