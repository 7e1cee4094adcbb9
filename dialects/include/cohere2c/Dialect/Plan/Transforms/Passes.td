//===- Passes.td - plan dialect passes ---------------------*- tablegen -*-===//
#ifndef COHERE2C_PLAN_TRANSFORMS_PASSES
#define COHERE2C_PLAN_TRANSFORMS_PASSES

include "mlir/Pass/PassBase.td"

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
