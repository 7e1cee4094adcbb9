//===- Passes.td - attn lowering passes --------------------*- tablegen -*-===//
#ifndef COHERE2C_CONVERSION_PASSES
#define COHERE2C_CONVERSION_PASSES

include "mlir/Pass/PassBase.td"

def ConvertAttnToHost : Pass<"convert-attn-to-host", "ModuleOp"> {
  let summary = "Lower the attn step function to loops for the host CPU";
  let description = [{
    Rewrites `func.func @cohere2c_step` from attn ops over tensors into scf
    loops over memrefs with the host step ABI (AttnToHost.h). Each attention
    op is specialized by its attributes: a `#attn.full` layer gets no window
    bound and a `#attn.none` layer no rotary code.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::func::FuncDialect",
                           "::mlir::math::MathDialect", "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
}

#endif // COHERE2C_CONVERSION_PASSES
