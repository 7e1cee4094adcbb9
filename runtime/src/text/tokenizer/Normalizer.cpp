//===- Normalizer.cpp - tokenizer.json's normalizer: NFC ------------------===//
#include "text/tokenizer/Normalizer.h"

#include <utf8proc.h>

#include <cstdlib>
#include <memory>
#include <new>

namespace cohere2c::text {

namespace {

/// Whether NFC leaves `text` as it is for sure: every code point is below
/// U+0300, where no character decomposes or combines with what precedes it
/// (all have NFC_Quick_Check=Yes and canonical combining class 0). In UTF-8
/// those are exactly the strings without a byte >= 0xCC.
bool isBelowCombiningMarks(std::string_view text) {
  for (char c : text)
    if (uint8_t(c) >= 0xCC)
      return false;
  return true;
}

void collect(const JsonNode &node, bool &nfc) {
  if (node.isNull())
    return;
  std::string type = node.type();
  if (type == "NFC") {
    nfc = true;
  } else if (type == "Sequence") {
    for (const JsonNode &step : node.member("normalizers").elements())
      collect(step, nfc);
  } else {
    node.member("type").fail("unsupported normalizer '" + type + "'");
  }
}

} // namespace

Normalizer Normalizer::parse(const JsonNode &node) {
  Normalizer normalizer;
  collect(node, normalizer.nfc_);
  return normalizer;
}

std::string_view Normalizer::normalize(std::string_view text,
                                       std::string &storage) const {
  if (!nfc_ || isBelowCombiningMarks(text))
    return text;
  utf8proc_uint8_t *composed = nullptr;
  utf8proc_ssize_t length =
      utf8proc_map(reinterpret_cast<const utf8proc_uint8_t *>(text.data()),
                   utf8proc_ssize_t(text.size()), &composed,
                   utf8proc_option_t(UTF8PROC_STABLE | UTF8PROC_COMPOSE));
  if (length < 0)
    throw std::bad_alloc();
  std::unique_ptr<utf8proc_uint8_t, decltype(&std::free)> owner(composed,
                                                                &std::free);
  storage.assign(reinterpret_cast<const char *>(composed), size_t(length));
  return storage;
}

} // namespace cohere2c::text
