//===- FuzzInput.h - What the fuzz targets share --------------------------===//
//
// Parsers that read a path (safetensors files, JSONL files) are fuzzed
// through a file in memory: memfd_create gives a regular file without a
// disk, which the parser opens by its /proc/self/fd path as it would any
// other.
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_TEST_FUZZ_FUZZINPUT_H
#define COHERE2C_TEST_FUZZ_FUZZINPUT_H

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <sys/mman.h>
#include <unistd.h>

namespace cohere2c::fuzz {

/// A file in memory holding the bytes last given to set().
class MemoryFile {
public:
  MemoryFile() : fd_(memfd_create("cohere2c-fuzz", 0)) {
    if (fd_ < 0) {
      std::perror("memfd_create");
      std::abort();
    }
  }
  ~MemoryFile() { close(fd_); }
  MemoryFile(const MemoryFile &) = delete;
  MemoryFile &operator=(const MemoryFile &) = delete;

  /// Replaces the file's content with `size` bytes at `data`.
  void set(const uint8_t *data, size_t size) {
    if (ftruncate(fd_, 0) != 0 || pwrite(fd_, data, size, 0) != (ssize_t)size) {
      std::perror("memfd write");
      std::abort();
    }
  }
  /// The path that opens the file.
  std::string path() const { return "/proc/self/fd/" + std::to_string(fd_); }

private:
  int fd_;
};

/// Ends the process as a finding of the fuzzer when `holds` is false: a
/// property of a parser's result (a round trip) that did not hold.
inline void require(bool holds, const char *what) {
  if (!holds) {
    std::fprintf(stderr, "fuzz target: %s\n", what);
    std::abort();
  }
}

} // namespace cohere2c::fuzz

#endif // COHERE2C_TEST_FUZZ_FUZZINPUT_H
