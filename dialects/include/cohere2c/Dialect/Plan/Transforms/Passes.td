//===- Passes.td - plan dialect passes ---------------------*- tablegen -*-===//
#ifndef COHERE2C_PLAN_TRANSFORMS_PASSES
#define COHERE2C_PLAN_TRANSFORMS_PASSES

include "mlir/Pass/PassBase.td"

def PlanAssignStreams : Pass<"plan-assign-streams", "ModuleOp"> {
  let summary = "Run each layer's MLP branch on the side stream";
  let description = [{
    Cohere2's block is parallel: the attention chain and the MLP read the
    same layer norm, and only the residual sum reads both. For each SwiGLU
    launch this pass puts it and the SwiGLUs and linear layers that read or
    overwrite its branch and otherwise read only what was ready before (the
    SwiGLU's one-token variant, the down projection's GEMM and matrix-vector
    kernel) on the side stream: a plan.fork after the last step writing the
    SwiGLU's inputs, the steps marked `side`, a plan.join before the first
    other step reading or overwriting the branch (the residual sum). What a
    step reads and writes comes from its arguments: a GEMM writes c, a kernel
    what its spec's family writes (KernelSpec.h, outputArguments). A branch
    that would begin before the previous one joined, or reach the end of the
    step, stays on the main stream. A step that has forks already is left
    alone. Runs before plan-reuse-buffers, while every value still has a
    buffer of its own.
  }];
}

def PlanReuseBuffers : Pass<"plan-reuse-buffers", "ModuleOp"> {
  let summary = "Share buffers between values whose lifetimes do not overlap";
  let description = [{
    The lowering gives every value a buffer of its own. This pass walks the
    steps in order and renames each buffer to a free one of the same width,
    dtype and rows where one exists: a buffer becomes free after the last
    step naming it, or, when that step lies between a fork and its join, at
    the join (the other stream may still run). A buffer a step writes is
    taken before the buffers it last reads are freed, so no step reads and
    writes the same buffer. Buffers no step names any longer are erased.
  }];
}

#endif // COHERE2C_PLAN_TRANSFORMS_PASSES
