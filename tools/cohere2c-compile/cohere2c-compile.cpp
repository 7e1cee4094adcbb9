//===- cohere2c-compile.cpp - Compile a Cohere2 model ---------------------===//
//
// Examples:
//   cohere2c-compile command-r7b.config.json --emit attn
//   cohere2c-compile tiny-cohere2/ -o tiny.so --target host --precision f32
//
// With a checkpoint folder, also writes OUT.weights beside OUT.so: the
// weights in the layout the compiled code reads (WeightLayout.h).
//
//===----------------------------------------------------------------------===//

#include "Artifact/Manifest.h"
#include "Artifact/WeightPacking.h"
#include "Frontend/ModelToAttn.h"
#include "Model/SafeTensors.h"
#include "Pipelines/Pipelines.h"
#include "Target/HostLibrary.h"
#include "cohere2c/Dialect/Attn/IR/Attn.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileOutputBuffer.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>

using namespace llvm;

namespace {

cl::opt<std::string> modelPath(cl::Positional, cl::Required,
                               cl::desc("<checkpoint folder or config.json>"));
cl::opt<std::string> outputPath("o", cl::desc("Output file ('-' for stdout, "
                                              "the default for text output)"),
                                cl::value_desc("file"), cl::init("-"));
enum class Emit { Attn, LLVM, Library };
cl::opt<Emit> emit(
    "emit", cl::desc("What to produce"),
    cl::values(clEnumValN(Emit::Attn, "attn", "the attn dialect module"),
               clEnumValN(Emit::LLVM, "llvm", "the module lowered to the LLVM dialect"),
               clEnumValN(Emit::Library, "lib",
                          "the shared library OUT.so (and OUT.weights)")),
    cl::init(Emit::Library));
cl::opt<std::string> target("target", cl::desc("Code target: host"), cl::init("host"));
cl::opt<std::string> precision("precision", cl::desc("f32 (host target)"),
                               cl::init("f32"));

int fail(const Twine &message) {
  WithColor::error(errs(), "cohere2c-compile") << message << "\n";
  return 1;
}

/// OUT.so -> OUT.weights
std::string weightsPathFor(StringRef libraryPath) {
  SmallString<256> path(libraryPath);
  sys::path::replace_extension(path, "weights");
  return std::string(path);
}

Error writeWeights(const ::cohere2c::Checkpoint &checkpoint,
                   const ::cohere2c::WeightLayout &layout, StringRef source,
                   StringRef path) {
  Expected<std::unique_ptr<FileOutputBuffer>> buffer =
      FileOutputBuffer::create(path, layout.totalBytes);
  if (!buffer)
    return buffer.takeError();
  bool showProgress = sys::Process::StandardErrIsDisplayed();
  ::cohere2c::Status packed = ::cohere2c::packWeights(
      checkpoint, layout, (*buffer)->getBufferStart(), source.str(),
      [&](size_t done, size_t all) {
        if (showProgress)
          errs() << "\rwriting " << path << ": " << done << "/" << all
                 << " tensors" << (done == all ? "\n" : "");
      });
  if (!packed.ok())
    return createStringError(packed.message());
  return (*buffer)->commit();
}

} // namespace

int main(int argc, char **argv) {
  cl::ParseCommandLineOptions(
      argc, argv,
      "cohere2c-compile: Cohere2ForCausalLM -> attn dialect -> shared library\n\n"
      "  cohere2c-compile command-r7b.config.json --emit attn\n"
      "  cohere2c-compile tiny-cohere2/ -o tiny.so --target host\n");

  if (target != "host")
    return fail("--target: unknown target '" + target + "', expected host");
  bool isFolder = sys::fs::is_directory(modelPath);
  std::string configPath = isFolder
                               ? (Twine(modelPath) + "/config.json").str()
                               : std::string(modelPath);
  auto config = ::cohere2c::ModelConfig::fromFile(configPath);
  if (!config.ok())
    return fail(config.status().message());
  std::optional<::cohere2c::Checkpoint> checkpoint;
  if (isFolder) {
    auto opened = ::cohere2c::Checkpoint::open(modelPath);
    if (!opened.ok())
      return fail(opened.status().message());
    ::cohere2c::Status tensors =
        ::cohere2c::checkTensors(*config, *opened, modelPath);
    if (!tensors.ok())
      return fail(tensors.message());
    checkpoint = std::move(*opened);
  }
  auto dtype = ::cohere2c::storageDTypeFor(precision);
  if (!dtype.ok())
    return fail("--precision: " + dtype.status().message());

  ::cohere2c::Manifest manifest;
  manifest.config = *config;
  manifest.target = target;
  manifest.precision = precision;
  manifest.weights = ::cohere2c::WeightLayout::forModel(*config, *dtype);
  manifest.kvGroups = ::cohere2c::kvGroupsFor(*config);

  mlir::DialectRegistry registry;
  mlir::cohere2c::registerPipelineDependencies(registry);
  registry.insert<mlir::cohere2c::attn::AttnDialect>();
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();
  auto module = mlir::cohere2c::buildAttnModule(context, *config, manifest.weights);
  if (failed(mlir::verify(*module)))
    return fail("internal error: the attn module does not verify");

  if (emit == Emit::Attn || emit == Emit::LLVM) {
    if (emit == Emit::LLVM)
      if (Error e = mlir::cohere2c::lowerAttnToHostLLVM(*module))
        return fail("lowering: " + toString(std::move(e)));
    std::error_code ec;
    ToolOutputFile out(outputPath, ec, sys::fs::OF_Text);
    if (ec)
      return fail(outputPath + ": " + ec.message());
    module->print(out.os());
    out.keep();
    return 0;
  }

  if (outputPath == "-")
    return fail("-o OUT.so is required to write a library");
  if (Error e = mlir::cohere2c::lowerAttnToHostLLVM(*module))
    return fail("lowering: " + toString(std::move(e)));
  if (Error e = mlir::cohere2c::writeHostLibrary(*module, manifest.toJson(),
                                                 outputPath))
    return fail(toString(std::move(e)));
  if (checkpoint)
    if (Error e = writeWeights(*checkpoint, manifest.weights, modelPath,
                               weightsPathFor(outputPath)))
      return fail(weightsPathFor(outputPath) + ": " + toString(std::move(e)));
  return 0;
}
