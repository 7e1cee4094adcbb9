//===- ConfigFuzz.cpp - Fuzzes config.json (ModelConfig::parse) -----------===//
//
// Any bytes are an error or a config; a config written back with toJson()
// parses again to the same model (Config.h's promise to manifests).
//
//===----------------------------------------------------------------------===//

#include "FuzzInput.h"
#include "Model/Config.h"

using namespace cohere2c;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  auto config = ModelConfig::parse(std::string((const char *)data, size),
                                   "config.json");
  if (!config.ok())
    return 0;
  auto again = ModelConfig::parse(config->toJson(), "toJson()");
  fuzz::require(again.ok(), "toJson() of a parsed config does not parse");
  fuzz::require(!firstDifference(*again, *config),
                "toJson() of a parsed config parses to another config");
  return 0;
}
