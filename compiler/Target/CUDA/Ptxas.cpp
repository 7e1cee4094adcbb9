//===- Ptxas.cpp ----------------------------------------------------------===//

#include "Target/CUDA/Ptxas.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <vector>

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

llvm::Expected<std::string> mlir::cohere2c::assemblePtx(llvm::StringRef ptx,
                                                       llvm::StringRef toolkit) {
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
