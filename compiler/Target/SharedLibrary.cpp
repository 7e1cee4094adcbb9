//===- SharedLibrary.cpp - LLVM dialect module -> shared library ---------===//

#include "Target/SharedLibrary.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"

using namespace mlir;

namespace {

/// Adds `value` as the exported i64 constant `name`.
void addExportedInteger(ModuleOp module, llvm::StringRef name, int64_t value) {
  OpBuilder b(module.getContext());
  b.setInsertionPointToStart(module.getBody());
  LLVM::GlobalOp::create(b, module.getLoc(), b.getI64Type(),
                         /*isConstant=*/true, LLVM::Linkage::External, name,
                         b.getI64IntegerAttr(value));
}

void addManifest(ModuleOp module, llvm::StringRef json) {
  std::string text = json.str();
  addExportedInteger(module, ::cohere2c::kManifestDigestSymbol,
                     (int64_t)::cohere2c::manifestDigest(text));
  text.push_back('\0');
  mlir::cohere2c::addExportedBytes(module, ::cohere2c::kManifestSymbol, text);
}

void optimize(llvm::Module &module, llvm::TargetMachine &machine) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(&machine);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3)
      .run(module, mam);
}

} // namespace

void mlir::cohere2c::addExportedBytes(ModuleOp module, llvm::StringRef name,
                                      llvm::StringRef bytes) {
  OpBuilder b(module.getContext());
  b.setInsertionPointToStart(module.getBody());
  auto type = LLVM::LLVMArrayType::get(b.getI8Type(), bytes.size());
  LLVM::GlobalOp::create(b, module.getLoc(), type, /*isConstant=*/true,
                         LLVM::Linkage::External, name, b.getStringAttr(bytes));
  addExportedInteger(module, (name + "_size").str(), bytes.size());
}

void mlir::cohere2c::addTextFiles(ModuleOp module,
                                  const ::cohere2c::TextFiles &files) {
  for (auto [name, bytes] :
       {std::pair{::cohere2c::kTokenizerJsonSymbol, &files.tokenizerJson},
        std::pair{::cohere2c::kTokenizerConfigSymbol,
                  &files.tokenizerConfigJson},
        std::pair{::cohere2c::kChatTemplateSymbol, &files.chatTemplate},
        std::pair{::cohere2c::kGenerationConfigSymbol,
                  &files.generationConfigJson}})
    if (!bytes->empty())
      addExportedBytes(module, name, *bytes);
}

llvm::Error mlir::cohere2c::writeSharedLibrary(ModuleOp module,
                                               llvm::StringRef manifestJson,
                                               llvm::StringRef outputPath) {
  addManifest(module, manifestJson);
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();

  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, llvmContext, "cohere2c");
  if (!llvmModule)
    return llvm::createStringError("translation to LLVM IR failed");

  llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return llvm::createStringError("no LLVM target for " + triple.str() + ": " +
                                   error);
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, "x86-64", "", llvm::TargetOptions(), llvm::Reloc::PIC_));
  llvmModule->setDataLayout(machine->createDataLayout());
  llvmModule->setTargetTriple(triple);
  optimize(*llvmModule, *machine);

  llvm::SmallString<128> objectPath;
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile("cohere2c", "o", objectPath))
    return llvm::createStringError("cannot create a temporary object file: " +
                                   ec.message());
  // Removed on return, and by LLVM's handler on a signal before it.
  llvm::FileRemover removeObject(objectPath);
  llvm::sys::RemoveFileOnSignal(objectPath);
  llvm::scope_exit forgetObject(
      [&] { llvm::sys::DontRemoveFileOnSignal(objectPath); });
  {
    std::error_code ec;
    llvm::raw_fd_ostream object(objectPath, ec, llvm::sys::fs::OF_None);
    if (ec)
      return llvm::createStringError(objectPath + ": " + ec.message());
    llvm::legacy::PassManager emit;
    if (machine->addPassesToEmitFile(emit, object, nullptr,
                                     llvm::CodeGenFileType::ObjectFile))
      return llvm::createStringError("the target cannot emit object files");
    emit.run(*llvmModule);
    object.close();
    // A write that failed (a full disk) is an error here; left in the
    // stream, it would end the tool as a fatal error.
    if (std::error_code failed = object.error()) {
      object.clear_error();
      return llvm::createStringError(objectPath + ": " + failed.message());
    }
  }

  llvm::ErrorOr<std::string> cc = llvm::sys::findProgramByName("cc");
  if (!cc)
    return llvm::createStringError(
        "linking the artifact needs a C compiler driver 'cc' on PATH");
  llvm::SmallVector<llvm::StringRef> args = {*cc,        "-shared",  "-o",
                                             outputPath, objectPath, "-lm"};
  std::string linkError;
  int rc =
      llvm::sys::ExecuteAndWait(*cc, args, std::nullopt, {}, 0, 0, &linkError);
  if (rc != 0)
    return llvm::createStringError("linking " + outputPath.str() + " failed (" +
                                   std::to_string(rc) + ") " + linkError);
  return llvm::Error::success();
}
