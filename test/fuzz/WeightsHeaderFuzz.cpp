//===- WeightsHeaderFuzz.cpp - Fuzzes OUT.weights headers -----------------===//
//
// The input is the start of a weights file (at most its header page is
// read) checked against an artifact of a fixed id and data size; the file's
// size is the input's, or that of a whole file when the input is a full
// header page.
//
//===----------------------------------------------------------------------===//

#include "Artifact/WeightsFile.h"
#include "FuzzInput.h"

using namespace cohere2c;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string id = "0123456789abcdef0123456789abcdef";
  const uint64_t dataBytes = 4985344;
  uint64_t fileBytes =
      size >= kWeightsHeaderBytes ? kWeightsHeaderBytes + dataBytes : size;
  Status checked =
      checkWeightsHeader(data, fileBytes, "fuzz.weights", id, dataBytes);
  (void)checked;
  // An empty id: the artifact was compiled without weights.
  checked = checkWeightsHeader(data, fileBytes, "fuzz.weights", "", dataBytes);
  (void)checked;
  return 0;
}
