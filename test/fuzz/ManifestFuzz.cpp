//===- ManifestFuzz.cpp - Fuzzes artifact manifests (Manifest::parse) -----===//
//
// The manifest, with the config, weight layout, KV groups and launch plan
// inside it, is read from an OUT.so that may have been edited or cut. Any
// bytes are an error or a manifest that toJson() writes back unchanged in
// meaning: its JSON parses to a manifest of the same JSON.
//
//===----------------------------------------------------------------------===//

#include "Artifact/Manifest.h"
#include "FuzzInput.h"

using namespace cohere2c;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  auto manifest =
      Manifest::parse(std::string((const char *)data, size), "manifest");
  if (!manifest.ok())
    return 0;
  std::string json = manifest->toJson();
  auto again = Manifest::parse(json, "toJson()");
  fuzz::require(again.ok(), "toJson() of a parsed manifest does not parse");
  fuzz::require(again->toJson() == json,
                "toJson() of a parsed manifest parses to another manifest");
  return 0;
}
