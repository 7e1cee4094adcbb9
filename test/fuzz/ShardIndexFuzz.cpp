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
#include <filesystem>
#include <fstream>

using namespace cohere2c;

namespace {

/// A folder with the shard, made on first use and removed at exit.
class CheckpointFolder {
public:
  CheckpointFolder() {
    char made[] = "/tmp/cohere2c-fuzz-index-XXXXXX";
    if (!mkdtemp(made))
      std::abort();
    path = made;
    std::string shard = path + "/model-00001-of-00001.safetensors";
    int fd = ::open(shard.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    float a[2] = {1, 2}, b[3] = {3, 4, 5};
    if (fd < 0 ||
        !writeSafeTensors(fd, shard, {{"a", {2}, a}, {"b", {1, 3}, b}}).ok() ||
        close(fd) != 0)
      std::abort();
  }
  ~CheckpointFolder() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::string path;
};

const std::string &checkpointFolder() {
  static const CheckpointFolder folder;
  return folder.path;
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
