//===- ShardIndexFuzz.cpp - Fuzzes model.safetensors.index.json -----------===//
//
// The input is the index of a checkpoint folder whose one shard,
// "model-00001-of-00001.safetensors", holds the tensors "a" and "b"
// (written once): any index is an error or a checkpoint whose tensors are
// the shard's.
//
//===----------------------------------------------------------------------===//

#include "FuzzInput.h"
#include "Model/SafeTensors.h"

#include <cstdlib>
#include <fcntl.h>
#include <fstream>

using namespace cohere2c;

namespace {

/// A folder with the shard, made on first use.
const std::string &checkpointFolder() {
  static const std::string folder = [] {
    char path[] = "/tmp/cohere2c-fuzz-index-XXXXXX";
    if (!mkdtemp(path))
      std::abort();
    std::string shard = std::string(path) + "/model-00001-of-00001.safetensors";
    int fd = ::open(shard.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    float a[2] = {1, 2}, b[3] = {3, 4, 5};
    if (fd < 0 ||
        !writeSafeTensors(fd, shard, {{"a", {2}, a}, {"b", {1, 3}, b}}).ok() ||
        close(fd) != 0)
      std::abort();
    return std::string(path);
  }();
  return folder;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string &folder = checkpointFolder();
  {
    std::ofstream index(folder + "/model.safetensors.index.json",
                        std::ios::binary | std::ios::trunc);
    index.write((const char *)data, size);
  }
  auto checkpoint = Checkpoint::open(folder);
  if (!checkpoint.ok())
    return 0;
  for (const auto &[name, tensor] : checkpoint->tensors())
    fuzz::require(name == "a" || name == "b",
                  "a checkpoint tensor that no shard holds");
  return 0;
}
