// RUN: cohere2c-opt %s -split-input-file --plan-assign-streams | FileCheck %s

// One layer of Cohere2's parallel block: the SwiGLU and the down projection
// (its GEMM and its matrix-vector kernel) go to the side stream, forked
// after the merged q/k/v/gate/up GEMM's last step and joined before the
// residual sum, which reads both branches; the attention chain stays on the
// main stream.
// CHECK-LABEL: plan.step
// CHECK: plan.launch @k::@norm
// CHECK-NEXT: plan.gemm "w.qkvgu"
// CHECK-NEXT: plan.launch @k::@gemv_qkvgu {{.*}}]{{$}}
// CHECK-NEXT: plan.fork
// CHECK-NEXT: plan.launch @k::@append {{.*}}]{{$}}
// CHECK-NEXT: plan.launch @k::@merge {{.*}}]{{$}}
// CHECK-NEXT: plan.gemm "w.o" {{.*}}]{{$}}
// CHECK-NEXT: plan.launch @k::@swiglu {{.*}} {side}
// CHECK-NEXT: plan.gemm "w.down" {{.*}} {side}
// CHECK-NEXT: plan.launch @k::@gemv_down {{.*}} {side}
// CHECK-NEXT: plan.join
// CHECK-NEXT: plan.launch @k::@sum
// CHECK-NEXT: plan.launch @k::@norm_final {{.*}}]{{$}}
// CHECK-NEXT: }
module {
  plan.step {
    plan.buffer @x : 64 x f32, rows <tokens>
    plan.buffer @h : 64 x bf16, rows <tokens>
    plan.buffer @qkvgu : 384 x bf16, rows <tokens>
    plan.buffer @a : 64 x bf16, rows <tokens>
    plan.buffer @o : 64 x f32, rows <tokens>
    plan.buffer @act : 128 x bf16, rows <tokens>
    plan.buffer @down : 64 x f32, rows <tokens>
    plan.buffer @x2 : 64 x f32, rows <tokens>
    plan.buffer @out : 64 x bf16, rows <tokens>
    plan.launch @k::@norm <layer_norm> grid(<tokens>, 1) block(32) [#plan.view<@x>, #plan.weight<"w.ln">, #plan.view<@h>]
    plan.gemm "w.qkvgu" m(<gemm_tokens>) n(384) k(64) alpha(1.0) [#plan.view<@h>, #plan.view<@qkvgu>]
    plan.launch @k::@gemv_qkvgu <gemv> grid(<gemv_token>, 1) block(256) [#plan.view<@h>, #plan.weight<"w.qkvgu">, #plan.view<@qkvgu>]
    plan.launch @k::@append <kv_append, strides = [384, 384]> grid(<tokens>, 1) block(256) [#plan.view<@qkvgu[64, 32]>, #plan.view<@qkvgu[96, 32]>, #plan.input<positions>, #plan.input<seqs>, #plan.input<kv_tables, group = 0>, #plan.input<kv_pool>, 0, #plan.param<block_size>, #plan.param<table_width>]
    plan.launch @k::@merge <attention_merge> grid(<tokens>, 1) block(32) [#plan.input<kv_pool>, #plan.view<@a>, 1]
    plan.gemm "w.o" m(<gemm_tokens>) n(64) k(64) alpha(1.0) [#plan.view<@a>, #plan.view<@o>]
    plan.launch @k::@swiglu <swiglu, strides = [384, 384]> grid(<tokens>, 1) block(128) [#plan.view<@qkvgu[128, 128]>, #plan.view<@qkvgu[256, 128]>, #plan.view<@act>]
    plan.gemm "w.down" m(<gemm_tokens>) n(64) k(128) alpha(1.0) [#plan.view<@act>, #plan.view<@down>]
    plan.launch @k::@gemv_down <gemv, out_f32> grid(<gemv_token>, 1) block(256) [#plan.view<@act>, #plan.weight<"w.down">, #plan.view<@down>]
    plan.launch @k::@sum <residual_sum> grid(<tokens>, 1) block(64) [#plan.view<@x>, #plan.view<@o>, #plan.view<@down>, #plan.view<@x2>]
    plan.launch @k::@norm_final <layer_norm> grid(<tokens>, 1) block(32) [#plan.view<@x2>, #plan.weight<"w.final">, #plan.view<@out>]
  }
}

// -----

// A branch that nothing after it joins (it would run to the end of the step)
// stays on the main stream.
// CHECK-LABEL: plan.step
// CHECK-NOT: plan.fork
// CHECK: plan.launch @k::@swiglu {{.*}}]{{$}}
// CHECK-NOT: side
module {
  plan.step {
    plan.buffer @gu : 256 x bf16, rows <tokens>
    plan.buffer @act : 128 x bf16, rows <tokens>
    plan.gemm "w.gu" m(<tokens>) n(256) k(64) alpha(1.0) [#plan.view<@act>, #plan.view<@gu>]
    plan.launch @k::@swiglu <swiglu, strides = [256, 256]> grid(<tokens>, 1) block(128) [#plan.view<@gu[0, 128]>, #plan.view<@gu[128, 128]>, #plan.view<@act>]
  }
}

// -----

// A step planned already is left as it is.
// CHECK-LABEL: plan.step
// CHECK-NEXT: plan.buffer
// CHECK-NEXT: plan.fork
// CHECK-NEXT: plan.launch @k::@embed {{.*}} {side}
// CHECK-NEXT: plan.join
// CHECK-NEXT: }
module {
  plan.step {
    plan.buffer @b : 8 x f32, rows <tokens>
    plan.fork
    plan.launch @k::@embed <embedding> grid(<tokens>, 1) block(32) [#plan.input<ids>, #plan.weight<"w.e">, #plan.view<@b>] {side}
    plan.join
  }
}

// -----

// The SwiGLU's one-token variant writes what the SwiGLU writes from the same
// inputs: it joins the branch. A step of another kind that writes into
// the branch's value (here a norm writing the first half of @act) must wait
// for the branch: the join precedes it.
// CHECK-LABEL: plan.step
// CHECK: plan.fork
// CHECK-NEXT: plan.launch @k::@swiglu {{.*}} {side}
// CHECK-NEXT: plan.launch @k::@swiglu_token {{.*}} {side}
// CHECK-NEXT: plan.gemm "w.down" {{.*}} {side}
// CHECK-NEXT: plan.join
// CHECK-NEXT: plan.launch @k::@norm {{.*}}]{{$}}
module {
  plan.step {
    plan.buffer @x : 64 x f32, rows <tokens>
    plan.buffer @gu : 256 x bf16, rows <tokens>
    plan.buffer @act : 128 x bf16, rows <tokens>
    plan.buffer @down : 64 x f32, rows <tokens>
    plan.gemm "w.gu" m(<gemm_tokens>) n(256) k(64) alpha(1.0) [#plan.view<@x>, #plan.view<@gu>]
    plan.launch @k::@swiglu <swiglu, strides = [256, 256]> grid(<gemm_tokens>, 1) block(128) [#plan.view<@gu[0, 128]>, #plan.view<@gu[128, 128]>, #plan.view<@act>]
    plan.launch @k::@swiglu_token <swiglu, strides = [256, 256]> grid(<gemv_token>, 2) block(32) [#plan.view<@gu[0, 128]>, #plan.view<@gu[128, 128]>, #plan.view<@act>]
    plan.gemm "w.down" m(<gemm_tokens>) n(64) k(128) alpha(1.0) [#plan.view<@act>, #plan.view<@down>]
    plan.launch @k::@norm <layer_norm> grid(<tokens>, 1) block(32) [#plan.view<@x>, #plan.weight<"w.ln">, #plan.view<@act[0, 64]>]
  }
}
