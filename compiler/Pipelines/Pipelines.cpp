//===- Pipelines.cpp ------------------------------------------------------===//

#include "Pipelines/Pipelines.h"

#include "Conversion/AttnToGPU/AttnToGPU.h"
#include "Conversion/AttnToHost/AttnToHost.h"
#include "cohere2c/Dialect/Attn/Transforms/Passes.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"

namespace mlir::cohere2c {
#define GEN_PASS_REGISTRATION
#include "Conversion/Passes.h.inc"
} // namespace mlir::cohere2c

using namespace mlir;

void mlir::cohere2c::registerPipelineDependencies(DialectRegistry &registry) {
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAllToLLVMIRTranslations(registry);
  static bool passesRegistered = [] {
    registerAllPasses();
    registerConversionPasses();
    attn::registerAttnPasses();
    return true;
  }();
  (void)passesRegistered;
}

namespace {

/// The attn-level passes every target runs first: FP8 rowwise quantization
/// of the linear layers whose weights are stored in FP8 (nothing otherwise),
/// one quantize per shared input (cse), and its fusion into the producers.
constexpr const char *kAttnPipeline =
    "attn-quantize-fp8-rowwise,cse,attn-fuse-norm-quant,attn-fuse-swiglu-quant,";

/// Runs `pipeline` (text without the outer builtin.module(...): with it,
/// MLIR 22's parsePassPipeline nests the passes on child modules, which
/// silently runs nothing) and fails on any error diagnostic, since some
/// passes report errors and still succeed.
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
    return llvm::createStringError(messages.empty() ? "lowering failed"
                                                    : messages);
  return llvm::Error::success();
}

} // namespace

llvm::Error mlir::cohere2c::lowerAttnToHostLLVM(ModuleOp module) {
  return runPipeline(
      module,
      std::string(kAttnPipeline) +
      "convert-attn-to-host,canonicalize,cse,loop-invariant-code-motion,"
      "convert-scf-to-cf,expand-strided-metadata,lower-affine,"
      "finalize-memref-to-llvm,convert-math-to-llvm,convert-arith-to-llvm,"
      "convert-index-to-llvm,convert-cf-to-llvm,convert-func-to-llvm,"
      "reconcile-unrealized-casts");
}

llvm::Expected<std::string> mlir::cohere2c::findCudaToolkit() {
  std::vector<std::string> candidates;
  for (const char *var : {"CUDA_HOME", "CUDA_PATH"})
    if (std::optional<std::string> v = llvm::sys::Process::GetEnv(var))
      candidates.push_back(*v);
  candidates.push_back("/usr/local/cuda");
  std::string tried;
  for (const std::string &dir : candidates) {
    if (llvm::sys::fs::can_execute(dir + "/bin/ptxas"))
      return dir;
    tried += " " + dir;
  }
  return llvm::createStringError(
      "no CUDA toolkit with bin/ptxas found (set CUDA_HOME); looked in" + tried);
}

namespace {

/// ptxas -arch=sm_90a on `ptx`; returns the cubin.
llvm::Expected<std::string> assemble(llvm::StringRef ptx, llvm::StringRef toolkit) {
  llvm::SmallString<128> ptxPath, cubinPath, logPath;
  for (auto [path, ext] : {std::pair{&ptxPath, "ptx"}, {&cubinPath, "cubin"},
                           {&logPath, "log"}})
    if (std::error_code ec =
            llvm::sys::fs::createTemporaryFile("cohere2c", ext, *path))
      return llvm::createStringError("cannot create a temporary file: " +
                                     ec.message());
  llvm::FileRemover removePtx(ptxPath), removeCubin(cubinPath), removeLog(logPath);
  {
    std::error_code ec;
    llvm::raw_fd_ostream out(ptxPath, ec);
    if (ec)
      return llvm::createStringError(ptxPath + ": " + ec.message());
    out << ptx;
  }
  std::string ptxas = (toolkit + "/bin/ptxas").str();
  llvm::SmallVector<llvm::StringRef> args = {ptxas, "-arch=sm_90a", "-O3",
                                             ptxPath, "-o", cubinPath};
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, logPath, logPath};
  int rc = llvm::sys::ExecuteAndWait(ptxas, args, std::nullopt, redirects);
  if (rc != 0) {
    auto log = llvm::MemoryBuffer::getFile(logPath);
    return llvm::createStringError("ptxas failed (" + std::to_string(rc) + "): " +
                                   (log ? (*log)->getBuffer().str() : ""));
  }
  auto cubin = llvm::MemoryBuffer::getFile(cubinPath, /*IsText=*/false);
  if (!cubin)
    return llvm::createStringError("ptxas wrote no cubin");
  return (*cubin)->getBuffer().str();
}

} // namespace

llvm::Expected<mlir::cohere2c::CudaKernels>
mlir::cohere2c::lowerAttnToCuda(ModuleOp module, llvm::StringRef toolkit) {
  std::string pipeline =
      std::string(kAttnPipeline) +
      "convert-attn-to-gpu,nvvm-attach-target{chip=sm_90a features=+ptx80 O=3},"
      "gpu.module(convert-scf-to-cf,convert-gpu-to-nvvm{use-bare-ptr-memref-call-conv=1},"
      "canonicalize,cse,reconcile-unrealized-casts),"
      "gpu-module-to-binary{format=isa toolkit=" + toolkit.str() + "}";
  if (llvm::Error e = runPipeline(module, pipeline))
    return std::move(e);
  CudaKernels kernels;
  auto plan = module->getAttrOfType<StringAttr>(kLaunchPlanAttrName);
  if (!plan)
    return llvm::createStringError("the lowering recorded no launch plan");
  kernels.launchPlan = plan.getValue().str();
  module.walk([&](gpu::BinaryOp binary) {
    for (Attribute object : binary.getObjects())
      if (auto o = dyn_cast<gpu::ObjectAttr>(object))
        if (o.getFormat() == gpu::CompilationTarget::Assembly)
          kernels.ptx = o.getObject().getValue().str();
  });
  if (kernels.ptx.empty())
    return llvm::createStringError("gpu-module-to-binary produced no PTX");
  llvm::Expected<std::string> cubin = assemble(kernels.ptx, toolkit);
  if (!cubin)
    return cubin.takeError();
  kernels.cubin = std::move(*cubin);
  return kernels;
}
