//===- PlanBase.td - The plan dialect ----------------------*- tablegen -*-===//
//
// A cuda step as the runtime replays it: activation buffers, kernel launches
// and GEMMs on a main and a side stream, forks and joins. Every size that
// changes from step to step is a step parameter (Artifact/StepParams.h),
// every pointer a buffer view, a weight or a step input (Artifact/LaunchPlan.h):
// the plan is what the runtime's LaunchPlan holds, as IR that passes plan
// (buffer reuse) and lit tests check.
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_PLAN_BASE
#define COHERE2C_PLAN_BASE

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def Plan_Dialect : Dialect {
  let name = "plan";
  let cppNamespace = "::mlir::cohere2c::plan";
  let summary = "The launch plan of a cuda step: buffers, launches, GEMMs, streams";
  let description = [{
    A `plan.step` holds, in order, the `plan.buffer` declarations and the
    steps: `plan.launch` of a kernel of the step's gpu.module, `plan.gemm`
    (cuBLASLt or the FP8 rowwise GEMM), `plan.fork` and `plan.join` of the
    side stream. Kernel arguments are attributes: `#plan.view` of a buffer
    (a column range of its rows), `#plan.weight`, `#plan.input` (what the
    executor provides each step), `#plan.param` (a step parameter) or an
    i64 constant.
  }];
  let useDefaultAttributePrinterParser = 1;
}

class Plan_Op<string mnemonic, list<Trait> traits = []>
    : Op<Plan_Dialect, mnemonic, traits>;

class Plan_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Plan_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

#endif // COHERE2C_PLAN_BASE
