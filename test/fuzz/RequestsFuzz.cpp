//===- RequestsFuzz.cpp - Fuzzes cohere2c-run's JSONL files ---------------===//
//
// The input is a --requests file and, read again, a --perplexity file, of
// an artifact without a tokenizer (text and chats are then errors: their
// parsers have targets of their own). Any bytes are an error or requests
// whose prompts are non-empty.
//
//===----------------------------------------------------------------------===//

#include "FuzzInput.h"
#include "Perplexity.h"
#include "RequestsFile.h"

using namespace cohere2c;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static fuzz::MemoryFile file;
  file.set(data, size);
  OwnedRequest defaults;
  auto requests = readRequests(file.path(), defaults, /*text=*/nullptr);
  if (requests.ok()) {
    fuzz::require(!requests->empty(), "a requests file of no request");
    for (const OwnedRequest &r : *requests)
      fuzz::require(!r.promptIds.empty() && !r.id.empty(),
                    "a request without a prompt or an id");
  }
  auto sequences = readPerplexityFile(file.path(), /*text=*/nullptr);
  if (sequences.ok())
    for (const OwnedRequest &r : *sequences)
      fuzz::require(r.promptIds.size() >= 2, "a perplexity line of < 2 ids");
  return 0;
}
