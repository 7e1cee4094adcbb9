//===- cohere2c-compile.cpp - Compile a Cohere2 model ---------------------===//
//
// Examples:
//   cohere2c-compile command-r7b.config.json --emit attn
//   cohere2c-compile tiny-cohere2/ -o tiny.so --target host --precision f32
//
//===----------------------------------------------------------------------===//

#include "Frontend/ModelToAttn.h"
#include "Artifact/Manifest.h"
#include "Model/SafeTensors.h"
#include "cohere2c/Dialect/Attn/IR/Attn.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace {

cl::opt<std::string> modelPath(cl::Positional, cl::Required,
                               cl::desc("<checkpoint folder or config.json>"));
cl::opt<std::string> outputPath("o", cl::desc("Output file (default: stdout for --emit attn)"),
                                cl::value_desc("file"), cl::init("-"));
enum class Emit { Attn };
cl::opt<Emit> emit("emit", cl::desc("What to produce"),
                   cl::values(clEnumValN(Emit::Attn, "attn", "the attn dialect module")),
                   cl::init(Emit::Attn));
cl::opt<std::string> precision("precision", cl::desc("f32 or bf16"), cl::init("f32"));

int fail(const Twine &message) {
  WithColor::error(errs(), "cohere2c-compile") << message << "\n";
  return 1;
}

} // namespace

int main(int argc, char **argv) {
  cl::SetVersionPrinter([](raw_ostream &os) { os << "cohere2c-compile 0.1\n"; });
  cl::ParseCommandLineOptions(
      argc, argv,
      "cohere2c-compile: Cohere2ForCausalLM -> attn dialect -> artifact\n\n"
      "  cohere2c-compile command-r7b.config.json --emit attn\n");

  bool isFolder = sys::fs::is_directory(modelPath);
  std::string configPath = isFolder
                               ? (Twine(modelPath) + "/config.json").str()
                               : std::string(modelPath);
  auto config = ::cohere2c::ModelConfig::fromFile(configPath);
  if (!config.ok())
    return fail(config.status().message());
  if (isFolder) {
    auto checkpoint = ::cohere2c::Checkpoint::open(modelPath);
    if (!checkpoint.ok())
      return fail(checkpoint.status().message());
    ::cohere2c::Status tensors =
        ::cohere2c::checkTensors(*config, *checkpoint, modelPath);
    if (!tensors.ok())
      return fail(tensors.message());
  }
  auto dtype = ::cohere2c::storageDTypeFor(precision);
  if (!dtype.ok())
    return fail("--precision: " + dtype.status().message());
  auto layout = ::cohere2c::WeightLayout::forModel(*config, *dtype);

  mlir::MLIRContext context;
  context.loadDialect<mlir::cohere2c::attn::AttnDialect, mlir::func::FuncDialect>();
  auto module = mlir::cohere2c::buildAttnModule(context, *config, layout);
  if (failed(mlir::verify(*module)))
    return fail("internal error: the attn module does not verify");

  std::error_code ec;
  ToolOutputFile out(outputPath, ec, sys::fs::OF_Text);
  if (ec)
    return fail(outputPath + ": " + ec.message());
  module->print(out.os());
  out.keep();
  return 0;
}
