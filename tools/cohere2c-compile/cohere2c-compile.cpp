//===- cohere2c-compile.cpp - Compile a Cohere2 model ---------------------===//
//
// Examples:
//   cohere2c-compile command-r7b.config.json --emit attn
//   cohere2c-compile tiny-cohere2/ -o tiny.so --target host --precision f32
//   cohere2c-compile command-r7b.config.json -o r7b.so --target cuda
//
// With a checkpoint folder (or, from a config, --random-weights SEED), also
// writes OUT.weights beside OUT.so: a header with an id the manifest
// records, then the weights in the layout the compiled code reads
// (WeightsFile.h, WeightLayout.h; RandomWeights.h).
//
//===----------------------------------------------------------------------===//

#include "Artifact/Manifest.h"
#include "Artifact/RandomWeights.h"
#include "Artifact/TextFiles.h"
#include "Artifact/WeightPacking.h"
#include "Artifact/WeightsFile.h"
#include "Frontend/ModelToAttn.h"
#include "Model/SafeTensors.h"
#include "Conversion/KVCachePlacement.h"
#include "Pipelines/Pipelines.h"
#include "Target/CUDA/Ptxas.h"
#include "Target/SharedLibrary.h"
#include "cohere2c/Dialect/Attn/IR/Attn.h"
#include "text/TextCheck.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <optional>
#include <unistd.h>

using namespace llvm;

namespace {

// --help lists these, not the options of the LLVM libraries linked in.
cl::OptionCategory toolOptions("cohere2c-compile options");

// Optional here and checked in main, so that its absence reads as our
// other errors do ("cohere2c-compile: error: ...").
cl::opt<std::string> modelPath(cl::Positional, cl::Optional,
                               cl::desc("<checkpoint folder or config.json>"),
                               cl::cat(toolOptions));
cl::opt<std::string> outputPath("o",
                                cl::desc("Output file ('-' for stdout, "
                                         "the default for text output)"),
                                cl::value_desc("file"), cl::init("-"),
                                cl::cat(toolOptions));
enum class Emit { Attn, LLVM, PTX, Plan, Library };
cl::opt<Emit> emit(
    "emit", cl::desc("What to produce"),
    cl::values(clEnumValN(Emit::Attn, "attn", "the attn dialect module"),
               clEnumValN(Emit::LLVM, "llvm",
                          "host: the module lowered to the LLVM dialect"),
               clEnumValN(Emit::PTX, "ptx",
                          "cuda: the kernels' PTX for sm_90a"),
               clEnumValN(Emit::Plan, "plan", "cuda: the launch plan (the plan dialect)"),
               clEnumValN(Emit::Library, "lib",
                          "the shared library OUT.so (and OUT.weights)")),
    cl::init(Emit::Library), cl::cat(toolOptions));
cl::opt<std::string>
    target("target", cl::desc("Code target: cuda (sm_90a) or host (CPU)"),
           cl::init("cuda"), cl::cat(toolOptions));
cl::opt<std::string>
    precision("precision",
              cl::desc("f32, bf16 (cuda) or fp8-rowwise (default: bf16 for "
                       "cuda, f32 for host)"),
              cl::cat(toolOptions));

cl::opt<std::string> kvCacheDtype(
    "kv-cache-dtype",
    cl::desc("auto (the precision's activations) or fp8 (K and V rounded to "
             "e4m3 at scale 1; host target so far)"),
    cl::init("auto"), cl::cat(toolOptions));

cl::opt<uint64_t> randomWeights(
    "random-weights",
    cl::desc("From a config.json: write OUT.weights with the seeded random "
             "weights cohere2c-run --random-weights SEED binds"),
    cl::value_desc("seed"), cl::cat(toolOptions));

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

/// A new file mapped for writing that replaces `path` only when committed:
/// a temporary file beside it until then, removed if it never is (by the
/// destructor, or by LLVM's signal handler on SIGINT, SIGTERM and the
/// like). Its blocks are allocated before it is mapped, so that a full disk
/// or a file size limit is an error from create() instead of SIGBUS at the
/// first write into the mapping (llvm::FileOutputBuffer maps a sparse
/// file).
class MappedOutputFile {
public:
  /// Errors: the temporary file cannot be made, or `size` bytes cannot be
  /// allocated for it (the OS's reason: "No space left on device", "File
  /// too large").
  static Expected<std::unique_ptr<MappedOutputFile>> create(StringRef path,
                                                            uint64_t size) {
    Expected<sys::fs::TempFile> temp =
        sys::fs::TempFile::create(path + ".tmp%%%%%%%");
    if (!temp)
      return temp.takeError();
    std::unique_ptr<MappedOutputFile> file(
        new MappedOutputFile(path, std::move(*temp)));
    if (std::error_code ec = file->allocate(size))
      return createStringError(ec, ec.message());
    std::error_code ec;
    file->region_.emplace(
        sys::fs::convertFDToNativeFile(file->temp_->FD),
        sys::fs::mapped_file_region::readwrite, size, 0, ec);
    if (ec)
      return createStringError(ec, ec.message());
    return std::move(file);
  }
  ~MappedOutputFile() {
    region_.reset();
    if (temp_)
      consumeError(temp_->discard());
  }
  char *data() { return region_->data(); }
  /// Writes the mapping back and renames the file over `path`. Errors: the
  /// OS's (a write-back that failed, a rename that failed).
  Error commit() {
    region_.reset();
    if (::fsync(temp_->FD) != 0)
      return createStringError(std::error_code(errno, std::generic_category()),
                               std::strerror(errno));
    Error kept = temp_->keep(path_);
    temp_.reset();
    return kept;
  }

private:
  MappedOutputFile(StringRef path, sys::fs::TempFile temp)
      : path_(path.str()), temp_(std::move(temp)) {}
  std::error_code allocate(uint64_t size) {
    // posix_fallocate returns its error rather than setting errno.
    int error = ::posix_fallocate(temp_->FD, 0, size);
    if (error == 0)
      return {};
    if (error != EOPNOTSUPP && error != EINVAL)
      return std::error_code(error, std::generic_category());
    // A file system that cannot allocate ahead: a sparse file, as before.
    return sys::fs::resize_file(temp_->FD, size);
  }
  std::string path_;
  std::optional<sys::fs::TempFile> temp_;
  std::optional<sys::fs::mapped_file_region> region_;
};

/// OUT.weights: the header page with `id`, then the weights `fill` writes
/// (into zeros), in a file that replaces `path` only when committed.
Expected<std::unique_ptr<MappedOutputFile>>
weightsFile(const ::cohere2c::WeightLayout &layout, StringRef id, StringRef path,
            function_ref<::cohere2c::Status(char *)> fill) {
  Expected<std::unique_ptr<MappedOutputFile>> file = MappedOutputFile::create(
      path, ::cohere2c::kWeightsHeaderBytes + layout.totalBytes);
  if (!file)
    return file.takeError();
  char *start = (*file)->data();
  ::cohere2c::writeWeightsHeader(start, id.str(), layout.totalBytes);
  char *weights = start + ::cohere2c::kWeightsHeaderBytes;
  std::memset(weights, 0, layout.totalBytes);
  ::cohere2c::Status filled = fill(weights);
  if (!filled.ok())
    return createStringError(filled.message());
  return std::move(*file);
}

/// The model to compile: its config and, from a checkpoint folder, its
/// tensors and text files.
struct Model {
  std::string configPath;
  ::cohere2c::ModelConfig config;
  std::optional<::cohere2c::Checkpoint> checkpoint;
  ::cohere2c::TextFiles textFiles;
  /// OUT.weights is written: from the checkpoint, or random.
  bool writesWeights() const { return checkpoint || randomWeights.getNumOccurrences(); }
};

/// The options that need no file: a model given, a known target, an output
/// made for it. Defaults --precision for the target.
Error checkOptions() {
  if (modelPath.empty())
    return createStringError("no checkpoint folder or config.json given (see --help)");
  // cl::opt keeps the last of a repeated flag; which one was meant is a
  // guess (cohere2c-run refuses repeats too).
  for (const auto &entry : cl::getRegisteredOptions()) {
    const cl::Option *option = entry.second;
    if (!is_contained(option->Categories, &toolOptions) ||
        option->getNumOccurrences() <= 1)
      continue;
    return createStringError(
        "-" + (option->ArgStr.size() > 1 ? "-" : std::string()) +
        option->ArgStr.str() + " given " +
        std::to_string(option->getNumOccurrences()) + " times; give it once");
  }
  if (target != "host" && target != "cuda")
    return createStringError("--target: unknown target '" + target +
                             "', expected cuda or host");
  bool cuda = target == "cuda";
  if (precision.empty())
    precision = cuda ? "bf16" : "f32";
  if (randomWeights.getNumOccurrences() && sys::fs::is_directory(modelPath))
    return createStringError("--random-weights: " + modelPath +
                             " is a checkpoint folder, whose weights are written");
  if ((emit == Emit::LLVM && cuda) ||
      ((emit == Emit::PTX || emit == Emit::Plan) && !cuda))
    return createStringError("--emit: that output is not made for the " + target +
                             " target");
  return Error::success();
}

/// The config, and from a checkpoint folder the tensors (checked against
/// the config) and the text files.
Expected<Model> readModel() {
  bool isFolder = sys::fs::is_directory(modelPath);
  std::string configPath = isFolder ? (Twine(modelPath) + "/config.json").str()
                                    : std::string(modelPath);
  auto config = ::cohere2c::ModelConfig::fromFile(configPath);
  if (!config.ok())
    return createStringError(config.status().message());
  Model model{configPath, std::move(*config), std::nullopt, {}};
  if (!isFolder)
    return model;
  auto opened = ::cohere2c::Checkpoint::open(modelPath);
  if (!opened.ok())
    return createStringError(opened.status().message());
  ::cohere2c::Status tensors =
      ::cohere2c::checkTensors(model.config, *opened, modelPath);
  if (!tensors.ok())
    return createStringError(tensors.message());
  model.checkpoint = std::move(*opened);
  // The tokenizer, chat template and generation config travel in the
  // artifact; a malformed one fails now.
  auto read = ::cohere2c::TextFiles::readCheckpoint(modelPath);
  if (!read.ok())
    return createStringError(read.status().message());
  ::cohere2c::Status loads =
      ::cohere2c::text::checkTextFiles(*read, modelPath);
  if (!loads.ok())
    return createStringError(loads.message());
  model.textFiles = std::move(*read);
  return model;
}

/// What a file that is not a regular file or a folder is, for messages.
const char *fileKind(sys::fs::file_type type) {
  switch (type) {
  case sys::fs::file_type::fifo_file:
    return "a FIFO";
  case sys::fs::file_type::character_file:
    return "a character device";
  case sys::fs::file_type::block_file:
    return "a block device";
  case sys::fs::file_type::socket_file:
    return "a socket";
  default:
    return "of an unknown type";
  }
}

/// An error unless `path`, which the library writer replaces by renaming a
/// new file over it, is absent or a regular file: the rename would replace
/// a device or FIFO with a file (as root, /dev/null itself). `name` is how
/// messages call it.
Error checkReplaceable(StringRef path, const Twine &name) {
  sys::fs::file_status status;
  if (std::error_code ec = sys::fs::status(path, status))
    return ec == std::errc::no_such_file_or_directory
               ? Error::success()
               : createStringError(name + ": " + ec.message());
  if (status.type() == sys::fs::file_type::regular_file)
    return Error::success();
  return createStringError(name + ": not a regular file (" +
                           fileKind(status.type()) + ")");
}

/// An output the compiler could not write fails now, not after lowering;
/// so does one that would replace an input.
Error checkOutput(const Model &model, StringRef weightsPath) {
  if (outputPath.empty())
    return createStringError("-o: an empty path");
  if (outputPath != "-") {
    if (sys::fs::is_directory(outputPath))
      return createStringError("-o " + outputPath + ": is a folder");
    SmallString<256> folder(outputPath);
    sys::path::remove_filename(folder);
    if (folder.empty())
      folder = ".";
    if (!sys::fs::is_directory(folder))
      return createStringError("-o " + outputPath + ": no folder " + std::string(folder));
    if (sys::fs::access(folder, sys::fs::AccessMode::Write))
      return createStringError("-o " + outputPath + ": cannot write in " +
                               std::string(folder));
  }
  // Text (--emit) is written through, so a device or FIFO takes it; a
  // library and its weights are renamed into place.
  if (emit == Emit::Library && outputPath != "-") {
    if (Error e = checkReplaceable(outputPath, "-o " + outputPath))
      return e;
    std::string weightsName =
        (weightsPath + " (the weights beside -o " + outputPath + ")").str();
    if (model.writesWeights())
      if (Error e = checkReplaceable(weightsPath, weightsName))
        return e;
  }
  // Never write over an input: -o ck/model.safetensors would destroy it.
  std::vector<std::string> inputs = {model.configPath};
  if (model.checkpoint)
    inputs.insert(inputs.end(), model.checkpoint->paths().begin(),
                  model.checkpoint->paths().end());
  llvm::append_range(inputs, model.textFiles.paths);
  for (const std::string &input : inputs) {
    bool same = false;
    if (outputPath != "-" && !sys::fs::equivalent(outputPath, input, same) &&
        same)
      return createStringError("-o " + outputPath + ": would overwrite the input " + input);
    if (emit == Emit::Library && model.writesWeights() && outputPath != "-" &&
        !sys::fs::equivalent(weightsPath, input, same) && same)
      return createStringError(weightsPath + " (the weights beside -o " + outputPath +
                               "): would overwrite the input " + input);
  }
  return Error::success();
}

/// The manifest of the artifact, without what the compiled IR gives: the KV
/// groups and the launch plan.
::cohere2c::Manifest manifestFor(const Model &model,
                                 const ::cohere2c::Precision &storage) {
  ::cohere2c::Manifest manifest;
  manifest.config = model.config;
  manifest.target = target;
  manifest.precision = precision;
  manifest.kvCacheDtype = kvCacheDtype;
  manifest.weights = ::cohere2c::WeightLayout::forModel(
      model.config, storage.activations, storage.fp8Linear);
  if (model.writesWeights())
    manifest.weightsId = ::cohere2c::newWeightsId();
  return manifest;
}

/// Writes `text` to -o (stdout for '-'); returns main's exit status.
int writeText(StringRef text) {
  std::error_code ec;
  ToolOutputFile out(outputPath, ec, sys::fs::OF_Text);
  if (ec)
    return fail(outputPath + ": " + ec.message());
  out.os() << text;
  out.keep();
  return 0;
}

/// The module as text.
std::string printed(mlir::ModuleOp module) {
  std::string text;
  raw_string_ostream os(text);
  module.print(os);
  return text;
}

/// The kernels of an attn module, compiled with the CUDA toolkit found.
Expected<mlir::cohere2c::CudaKernels> lowerToCuda(mlir::ModuleOp module) {
  Expected<std::string> toolkit = mlir::cohere2c::findCudaToolkit();
  if (!toolkit)
    return toolkit.takeError();
  Expected<mlir::cohere2c::CudaKernels> kernels =
      mlir::cohere2c::lowerAttnToCuda(module, *toolkit);
  if (!kernels)
    return createStringError("lowering: " + toString(kernels.takeError()));
  return kernels;
}

/// Writes OUT.so (`library` with the manifest and the text files) and, with
/// a checkpoint or --random-weights, OUT.weights.
Error writeArtifact(mlir::ModuleOp library, const ::cohere2c::Manifest &manifest,
                    const Model &model, StringRef weightsPath) {
  // OUT.so and OUT.weights are replaced together or not at all: the
  // weights are packed (and checked) into a temporary file, the library is
  // linked to a temporary path, and only then are both moved into place.
  std::unique_ptr<MappedOutputFile> weights;
  if (model.writesWeights()) {
    bool showProgress = sys::Process::StandardErrIsDisplayed();
    auto packed = weightsFile(manifest.weights, manifest.weightsId, weightsPath, [&](char *out) {
      if (!model.checkpoint) {
        ::cohere2c::fillRandomWeights(manifest.weights, randomWeights, out);
        return ::cohere2c::Status::success();
      }
      return ::cohere2c::packWeights(*model.checkpoint, manifest.weights, out, modelPath,
                                     [&](size_t done, size_t all) {
                                       if (showProgress)
                                         errs() << "\rwriting " << weightsPath << ": " << done
                                                << "/" << all << " tensors"
                                                << (done == all ? "\n" : "");
                                     });
    });
    if (!packed)
      return createStringError(weightsPath + ": " + toString(packed.takeError()));
    weights = std::move(*packed);
  }
  mlir::cohere2c::addTextFiles(library, model.textFiles);
  // The linker writes OUT.so.partial; a signal before the rename removes it
  // (LLVM's handler), as any error does.
  std::string partialLibrary = outputPath + ".partial";
  sys::RemoveFileOnSignal(partialLibrary);
  auto discard = [&](Error e) {
    sys::fs::remove(partialLibrary);
    sys::DontRemoveFileOnSignal(partialLibrary);
    return e;
  };
  if (Error e = mlir::cohere2c::writeSharedLibrary(library, manifest.toJson(),
                                                   partialLibrary))
    return discard(std::move(e));
  if (weights)
    if (Error e = weights->commit())
      return discard(
          createStringError(weightsPath + ": " + toString(std::move(e))));
  if (std::error_code ec = sys::fs::rename(partialLibrary, outputPath))
    return discard(createStringError("-o " + outputPath + ": " + ec.message()));
  sys::DontRemoveFileOnSignal(partialLibrary);
  return Error::success();
}

} // namespace

int main(int argc, char **argv) {
  // LLVM's handlers remove temporary files on SIGINT, SIGTERM and crashes.
  sys::PrintStackTraceOnErrorSignal(argv[0]);
  // Then SIGXFSZ, which they would take too, is ignored: a write past the
  // file size limit (ulimit -f) fails with EFBIG and is reported, where the
  // signal would end the tool without a word.
  std::signal(SIGXFSZ, SIG_IGN);
  cl::HideUnrelatedOptions(toolOptions);
  cl::ParseCommandLineOptions(
      argc, argv,
      "cohere2c-compile: Cohere2ForCausalLM -> attn dialect -> shared "
      "library\n\n"
      "  cohere2c-compile command-r7b.config.json --emit attn\n"
      "  cohere2c-compile tiny-cohere2/ -o tiny.so --target host\n");

  if (Error e = checkOptions())
    return fail(toString(std::move(e)));
  Expected<Model> model = readModel();
  if (!model)
    return fail(toString(model.takeError()));
  std::string weightsPath = weightsPathFor(outputPath);
  if (Error e = checkOutput(*model, weightsPath))
    return fail(toString(std::move(e)));
  if (auto p = ::cohere2c::Precision::forTarget(precision, target); !p.ok())
    return fail("--precision: " + p.status().message());
  auto storage =
      ::cohere2c::Precision::forTarget(precision, target, kvCacheDtype);
  if (!storage.ok())
    return fail("--kv-cache-dtype: " + storage.status().message());
  ::cohere2c::Manifest manifest = manifestFor(*model, *storage);

  mlir::DialectRegistry registry;
  mlir::cohere2c::registerPipelineDependencies(registry);
  registry.insert<mlir::cohere2c::attn::AttnDialect>();
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();
  auto module =
      mlir::cohere2c::buildAttnModule(context, model->config, manifest.weights);
  if (storage->e4m3KVCache)
    (*module)->setAttr(mlir::cohere2c::kE4M3KVCacheAttrName,
                       mlir::UnitAttr::get(&context));
  if (failed(mlir::verify(*module)))
    return fail("internal error: the attn module does not verify");
  manifest.kvGroups = mlir::cohere2c::kvGroupsOf(*module);

  if (emit == Emit::Attn)
    return writeText(printed(*module));
  if (emit == Emit::Library && outputPath == "-")
    return fail("-o OUT.so is required to write a library");

  mlir::OwningOpRef<mlir::ModuleOp> library;
  if (target == "cuda") {
    Expected<mlir::cohere2c::CudaKernels> kernels = lowerToCuda(*module);
    if (!kernels)
      return fail(toString(kernels.takeError()));
    if (emit == Emit::PTX)
      return writeText(kernels->ptx);
    if (emit == Emit::Plan)
      return writeText(kernels->planIR);
    manifest.launchPlan = std::move(kernels->launchPlan);
    // The artifact holds the kernel images, the PTX kept as the fallback the
    // driver can compile for another device.
    library = mlir::ModuleOp::create(module->getLoc());
    mlir::cohere2c::addExportedBytes(*library, "cohere2c_cubin",
                                     kernels->cubin);
    mlir::cohere2c::addExportedBytes(*library, "cohere2c_ptx",
                                     kernels->ptx + '\0');
  } else {
    if (Error e = mlir::cohere2c::lowerAttnToHostLLVM(*module))
      return fail("lowering: " + toString(std::move(e)));
    if (emit == Emit::LLVM)
      return writeText(printed(*module));
    library = std::move(module);
  }
  if (Error e = writeArtifact(*library, manifest, *model, weightsPath))
    return fail(toString(std::move(e)));
  return 0;
}
