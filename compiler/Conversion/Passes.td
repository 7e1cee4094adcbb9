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

def ConvertAttnToGPU : Pass<"convert-attn-to-gpu", "ModuleOp"> {
  let summary = "Lower the attn step function to gpu kernels and a launch plan";
  let description = [{
    Generates a `gpu.module @cohere2c_kernels` with one kernel per distinct
    specialization (embedding, layer norm, KV append with or without RoPE,
    attention per window, SwiGLU, residual sum, row gather) and records the
    step as a `plan.step`: the launches and, for linear layers and the
    logits, GEMMs (cuBLASLt in the runtime).
    A `#attn.full` layer's kernels contain no rotary code and no window bound.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::gpu::GPUDialect",
                           "::mlir::math::MathDialect", "::mlir::memref::MemRefDialect",
                           "::mlir::NVVM::NVVMDialect", "::mlir::scf::SCFDialect",
                           "::mlir::cohere2c::plan::PlanDialect"];
}

#endif // COHERE2C_CONVERSION_PASSES
