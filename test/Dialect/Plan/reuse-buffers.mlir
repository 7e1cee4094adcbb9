// RUN: cohere2c-opt %s --plan-reuse-buffers | FileCheck %s

// A buffer is free after the last step naming it; a value then takes a free
// buffer of its shape (width, dtype, rows). A step's output never shares the
// buffer of an input it reads last. A buffer whose last use lies between a
// fork and its join is free only at the join: the other stream may still
// run. What is left is renamed b0, b1, ... in order of declaration.
// CHECK-LABEL: plan.step {
// CHECK-NEXT: plan.buffer @b0 : 8 x f32, rows <tokens>
// CHECK-NEXT: plan.buffer @b1 : 8 x f32, rows <tokens>
// CHECK-NEXT: plan.buffer @b2 : 8 x bf16, rows <tokens>
// CHECK-NEXT: plan.buffer @b3 : 8 x f32, rows <rows>
// CHECK-NEXT: plan.buffer @b4 : 8 x f32, rows <tokens>
// CHECK-NEXT: plan.launch @k::@embed {{.*}} [#plan.view<@b0>]
// CHECK-NEXT: plan.launch @k::@norm {{.*}} [#plan.view<@b0>, #plan.view<@b1>]
// x (b0) is dead: y's output takes it.
// CHECK-NEXT: plan.launch @k::@next {{.*}} [#plan.view<@b1>, #plan.view<@b0>]
// Another dtype or rows parameter: new buffers.
// CHECK-NEXT: plan.launch @k::@cast {{.*}} [#plan.view<@b0>, #plan.view<@b2>]
// CHECK-NEXT: plan.launch @k::@gather {{.*}} [#plan.view<@b0>, #plan.view<@b3>]
// CHECK-NEXT: plan.fork
// b0's last use is on the side stream: not reused before the join.
// CHECK-NEXT: plan.launch @k::@side {{.*}} [#plan.view<@b0>, #plan.view<@b1>] {side}
// CHECK-NEXT: plan.launch @k::@main {{.*}} [#plan.view<@b2>, #plan.view<@b4>]
// CHECK-NEXT: plan.join
// CHECK-NEXT: plan.launch @k::@sum {{.*}} [#plan.view<@b1>, #plan.view<@b4>, #plan.view<@b0>]
// CHECK-NEXT: }
module {
  plan.step {
    plan.buffer @x : 8 x f32, rows <tokens>
    plan.buffer @y : 8 x f32, rows <tokens>
    plan.buffer @z : 8 x f32, rows <tokens>
    plan.buffer @h : 8 x bf16, rows <tokens>
    plan.buffer @r : 8 x f32, rows <rows>
    plan.buffer @s : 8 x f32, rows <tokens>
    plan.buffer @m : 8 x f32, rows <tokens>
    plan.buffer @out : 8 x f32, rows <tokens>
    plan.buffer @unused : 8 x f32, rows <tokens>
    plan.launch @k::@embed <embedding> grid(<tokens>, 1) block(32) [#plan.view<@x>]
    plan.launch @k::@norm <layer_norm> grid(<tokens>, 1) block(32) [#plan.view<@x>, #plan.view<@y>]
    plan.launch @k::@next <layer_norm> grid(<tokens>, 1) block(32) [#plan.view<@y>, #plan.view<@z>]
    plan.launch @k::@cast <quantize_fp8> grid(<tokens>, 1) block(32) [#plan.view<@z>, #plan.view<@h>]
    plan.launch @k::@gather <gather_rows> grid(<rows>, 1) block(32) [#plan.view<@z>, #plan.view<@r>]
    plan.fork
    plan.launch @k::@side <quantize_fp8> grid(<tokens>, 1) block(32) [#plan.view<@z>, #plan.view<@s>] {side}
    plan.launch @k::@main <quantize_fp8> grid(<tokens>, 1) block(32) [#plan.view<@h>, #plan.view<@m>]
    plan.join
    plan.launch @k::@sum <residual_sum> grid(<tokens>, 1) block(32) [#plan.view<@s>, #plan.view<@m>, #plan.view<@out>]
  }
}
