//===- ReplayMain.cpp - Runs a fuzz target over files, without libFuzzer ---===//
//
//   replay-<target> FILE_OR_FOLDER...
//
// Calls the target's LLVMFuzzerTestOneInput once per file (the files of a
// folder in name order), as libFuzzer does when given files: the committed
// corpus of each target (its seeds and every input a fuzzer crashed on) runs
// as a test in every build, with any compiler.
//
//===----------------------------------------------------------------------===//

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

namespace {

/// The files `arg` names: itself, or a folder's regular files sorted.
std::vector<std::filesystem::path> filesOf(const std::filesystem::path &arg) {
  if (!std::filesystem::is_directory(arg))
    return {arg};
  std::vector<std::filesystem::path> files;
  for (const auto &entry : std::filesystem::directory_iterator(arg))
    if (entry.is_regular_file())
      files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

} // namespace

int main(int argc, char **argv) {
  size_t replayed = 0;
  for (int i = 1; i < argc; ++i) {
    for (const std::filesystem::path &file : filesOf(argv[i])) {
      std::ifstream in(file, std::ios::binary);
      if (!in) {
        std::fprintf(stderr, "replay: cannot read %s\n", file.c_str());
        return 1;
      }
      std::vector<char> bytes((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
      // A copy of exactly `size` bytes, so that ASan sees a read past it.
      std::vector<uint8_t> input(bytes.begin(), bytes.end());
      LLVMFuzzerTestOneInput(input.data(), input.size());
      ++replayed;
    }
  }
  if (replayed == 0) {
    std::fprintf(stderr, "replay: no input files\n");
    return 1;
  }
  std::printf("replay: %zu inputs, no finding\n", replayed);
  return 0;
}
