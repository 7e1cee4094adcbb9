//===- Pipelines.cpp ------------------------------------------------------===//

#include "Pipelines/Pipelines.h"

#include "Conversion/AttnToGPU/AttnToGPU.h"
#include "Conversion/AttnToHost/AttnToHost.h"
#include "Target/CUDA/LaunchPlanOf.h"
#include "Target/CUDA/Ptxas.h"
#include "cohere2c/Dialect/Attn/Transforms/Passes.h"
#include "cohere2c/Dialect/Plan/Transforms/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"

namespace mlir::cohere2c {
#define GEN_PASS_REGISTRATION
#include "Conversion/Passes.h.inc"
} // namespace mlir::cohere2c

using namespace mlir;

namespace {

/// The attn-level passes every target runs first: FP8 rowwise quantization
/// of the linear layers whose weights are stored in FP8 (nothing otherwise),
/// one quantize per shared input (cse), and its fusion into the producers.
constexpr const char *kAttnPipeline =
    "attn-quantize-fp8-rowwise,cse,attn-fuse-norm-quant,attn-fuse-swiglu-quant,";

/// Pipelines are written as text without the outer builtin.module(...):
/// with it, MLIR 22's parsePassPipeline nests the passes on child modules,
/// which silently runs nothing.
std::string hostPipeline() {
  return std::string(kAttnPipeline) +
         "convert-attn-to-host,canonicalize,cse,loop-invariant-code-motion,"
         "convert-scf-to-cf,expand-strided-metadata,lower-affine,"
         "finalize-memref-to-llvm,convert-math-to-llvm,convert-arith-to-llvm,"
         "convert-index-to-llvm,convert-cf-to-llvm,convert-func-to-llvm,"
         "reconcile-unrealized-casts";
}

std::string cudaPipeline(StringRef toolkit) {
  return std::string(kAttnPipeline) +
         "convert-attn-to-gpu,plan-assign-streams,plan-reuse-buffers,"
         "nvvm-attach-target{chip=sm_90a features=+ptx80 O=3},"
         "gpu.module(convert-scf-to-cf,convert-gpu-to-nvvm{use-bare-ptr-memref-call-conv=1},"
         "canonicalize,cse,reconcile-unrealized-casts),"
         "gpu-module-to-binary{format=isa" +
         (toolkit.empty() ? std::string() : " toolkit=" + toolkit.str()) + "}";
}

struct CudaPipelineOptions : public PassPipelineOptions<CudaPipelineOptions> {
  Option<std::string> toolkit{*this, "toolkit",
                              llvm::cl::desc("The CUDA toolkit (libdevice) folder")};
};

void registerPipelines() {
  PassPipelineRegistration<>(
      "cohere2c-lower-to-host", "attn -> the LLVM dialect for the host CPU",
      [](OpPassManager &pm) { (void)parsePassPipeline(hostPipeline(), pm); });
  PassPipelineRegistration<CudaPipelineOptions>(
      "cohere2c-lower-to-cuda", "attn -> sm_90a kernels (PTX) and a plan.step",
      [](OpPassManager &pm, const CudaPipelineOptions &options) {
        (void)parsePassPipeline(cudaPipeline(options.toolkit), pm);
      });
}

/// Runs `pipeline` and fails on any error diagnostic, since some passes
/// report errors and still succeed.
llvm::Error runPipeline(ModuleOp module, StringRef pipeline) {
  std::string messages;
  llvm::raw_string_ostream os(messages);
  unsigned errors = 0;
  ScopedDiagnosticHandler handler(module.getContext(), [&](Diagnostic &d) {
    if (d.getSeverity() == DiagnosticSeverity::Error) {
      ++errors;
      os << d.getLocation() << ": " << d << "\n";
    }
    return success();
  });
  PassManager pm(module.getContext(), "builtin.module");
  if (failed(parsePassPipeline(pipeline, pm, os)))
    return llvm::createStringError("bad pipeline: " + messages);
  if (failed(pm.run(module)) || errors)
    return llvm::createStringError(messages.empty() ? "lowering failed" : messages);
  return llvm::Error::success();
}

} // namespace

void mlir::cohere2c::registerPipelineDependencies(DialectRegistry &registry) {
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAllToLLVMIRTranslations(registry);
  static bool passesRegistered = [] {
    registerAllPasses();
    registerConversionPasses();
    attn::registerAttnPasses();
    plan::registerPlanPasses();
    registerPipelines();
    return true;
  }();
  (void)passesRegistered;
}

llvm::Error mlir::cohere2c::lowerAttnToHostLLVM(ModuleOp module) {
  return runPipeline(module, hostPipeline());
}

llvm::Expected<mlir::cohere2c::CudaKernels>
mlir::cohere2c::lowerAttnToCuda(ModuleOp module, llvm::StringRef toolkit) {
  if (llvm::Error e = runPipeline(module, cudaPipeline(toolkit)))
    return std::move(e);
  CudaKernels kernels;
  auto steps = module.getOps<plan::StepOp>();
  if (steps.empty())
    return llvm::createStringError("the lowering recorded no plan.step");
  llvm::raw_string_ostream planIR(kernels.planIR);
  (*steps.begin()).print(planIR);
  planIR << "\n";
  kernels.launchPlan = launchPlanOf(*steps.begin());
  module.walk([&](gpu::BinaryOp binary) {
    for (Attribute object : binary.getObjects())
      if (auto o = dyn_cast<gpu::ObjectAttr>(object))
        if (o.getFormat() == gpu::CompilationTarget::Assembly)
          kernels.ptx = o.getObject().getValue().str();
  });
  if (kernels.ptx.empty())
    return llvm::createStringError("gpu-module-to-binary produced no PTX");
  llvm::Expected<std::string> cubin = assemblePtx(kernels.ptx, toolkit);
  if (!cubin)
    return cubin.takeError();
  kernels.cubin = std::move(*cubin);
  return kernels;
}
