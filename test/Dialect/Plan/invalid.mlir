// RUN: cohere2c-opt %s -split-input-file -verify-diagnostics

module {
  plan.step {
    // expected-error @+2 {{unknown step parameter 'layers'}}
    // expected-error @+1 {{failed to parse Plan_ParamAttr parameter 'param'}}
    plan.buffer @b0 : 8 x f32, rows <layers>
  }
}

// -----

module {
  plan.step {
    // expected-error @+2 {{unknown step input 'pool'}}
    // expected-error @+1 {{failed to parse Plan_InputAttr parameter 'input'}}
    plan.launch @k::@f <embedding> grid(<tokens>, 1) block(32) [#plan.input<pool>]
  }
}

// -----

module {
  plan.step {
    // expected-error @+1 {{the KV input kv_tables and only it names a group (>= 0); found kv_tables without one}}
    plan.launch @k::@f <embedding> grid(<tokens>, 1) block(32) [#plan.input<kv_tables>]
  }
}

// -----

module {
  plan.step {
    // expected-error @+1 {{the KV input kv_tables and only it names a group (>= 0); found ids with group 1}}
    plan.launch @k::@f <embedding> grid(<tokens>, 1) block(32) [#plan.input<ids, group = 1>]
  }
}

// -----

module {
  plan.step {
    // expected-error @+1 {{the KV input kv_tables and only it names a group (>= 0); found kv_pool with group 0}}
    plan.launch @k::@f <embedding> grid(<tokens>, 1) block(32) [#plan.input<kv_pool, group = 0>]
  }
}

// -----

module {
  plan.step {
    plan.buffer @b0 : 8 x f32, rows <tokens>
    // expected-error @+1 {{names no buffer of the step: @b1}}
    plan.launch @k::@f <embedding> grid(<tokens>, 1) block(32) [#plan.view<@b1>]
  }
}

// -----

module {
  plan.step {
    plan.buffer @b0 : 8 x f32, rows <tokens>
    // expected-error @+1 {{outside buffer @b0 of width 8}}
    plan.launch @k::@f <embedding> grid(<tokens>, 1) block(32) [#plan.view<@b0[4, 8]>]
  }
}

// -----

module {
  plan.step {
    // expected-error @+1 {{a view is a whole buffer or [column, width] with width > 0; found [4, 0]}}
    plan.launch @k::@f <embedding> grid(<tokens>, 1) block(32) [#plan.view<@b0[4, 0]>]
  }
}

// -----

module {
  plan.step {
    // expected-error @+1 {{'plan.launch' op attribute 'block_x' failed to satisfy constraint}}
    plan.launch @k::@f <embedding> grid(<tokens>, 1) block(2048) []
  }
}

// -----

module {
  plan.step {
    // expected-error @+1 {{argument "x" is not a view, weight, input, parameter or i64}}
    plan.launch @k::@f <embedding> grid(<tokens>, 1) block(32) ["x"]
  }
}

// -----

module {
  plan.step {
    plan.buffer @b0 : 8 x f32, rows <tokens>
    // expected-error @+1 {{takes [a, c] or, with weight_scale, [a, c, a's scales], then the addend with plus; found 2 arguments}}
    plan.gemm "w" scaled "s" m(<tokens>) n(8) k(8) alpha(1.0) [#plan.view<@b0>, #plan.view<@b0>]
  }
}

// -----

module {
  plan.step {
    // expected-error @+1 {{operand #plan.input<ids> is neither a buffer view nor the logits}}
    plan.gemm "w" m(<tokens>) n(8) k(8) alpha(1.0) [#plan.input<ids>, #plan.input<logits>]
  }
}

// -----

module {
  plan.step {
    plan.buffer @b0 : 8 x f32, rows <tokens>
    // expected-error @+1 {{on the side stream outside a fork and its join}}
    plan.launch @k::@f <embedding> grid(<tokens>, 1) block(32) [#plan.view<@b0>] {side}
  }
}

// -----

module {
  plan.step {
    plan.fork
    // expected-error @+1 {{before the join of the previous fork}}
    plan.fork
  }
}

// -----

module {
  plan.step {
    // expected-error @+1 {{without a fork}}
    plan.join
  }
}

// -----

module {
  // expected-error @+1 {{a fork without a join}}
  plan.step {
    plan.fork
  }
}

// -----

module {
  plan.step {
    // expected-error @+2 {{unknown kernel family 'softmax'}}
    // expected-error @+1 {{failed to parse Plan_KernelAttr parameter 'spec'}}
    plan.launch @k::@f <softmax> grid(<tokens>, 1) block(32) []
  }
}

// -----

// A kernel compiled for rows of 768 (a column range of the merged q/k/v
// output) must be given a buffer of that width.
module {
  plan.step {
    plan.buffer @b0 : 256 x bf16, rows <tokens>
    plan.buffer @b1 : 128 x bf16, rows <tokens>
    // expected-error @+1 {{argument 1 is a view of @b0 of width 256; the kernel was compiled for a row stride of 768}}
    plan.launch @k::@f <swiglu, strides = [256, 768]> grid(<tokens>, 1) block(32) [#plan.view<@b0[0, 128]>, #plan.view<@b0[128, 128]>, #plan.view<@b1>]
  }
}
