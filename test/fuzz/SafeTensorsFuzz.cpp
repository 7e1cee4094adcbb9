//===- SafeTensorsFuzz.cpp - Fuzzes safetensors files (SafeTensorsFile) ---===//
//
// Any bytes are an error or tensors whose views lie inside the file: each
// tensor's first and last elements are read.
//
//===----------------------------------------------------------------------===//

#include "FuzzInput.h"
#include "Model/SafeTensors.h"

using namespace cohere2c;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static fuzz::MemoryFile file;
  file.set(data, size);
  auto opened = SafeTensorsFile::open(file.path());
  if (!opened.ok())
    return 0;
  volatile float sink = 0;
  for (const auto &[name, tensor] : (*opened)->tensors()) {
    int64_t n = tensor.numElements();
    fuzz::require(n >= 0 && (uint64_t)n * dtypeSize(tensor.dtype) ==
                                tensor.numBytes,
                  "a tensor's bytes are not its shape x its dtype's size");
    if (n > 0)
      sink = sink + tensor.at(0) + tensor.at(n - 1);
  }
  return 0;
}
