//===- TextFiles.h - A model's tokenizer, chat template, generation config ===//
//
// What a Hugging Face checkpoint folder holds for turning text into ids and
// back, kept verbatim: the compiler copies these files into the artifact
// (one exported byte array each) so that OUT.so alone can talk, and the
// runtime reads them back. Parsing them is the runtime's text library's
// business (runtime/src/text/ModelText.h).
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_ARTIFACT_TEXTFILES_H
#define COHERE2C_ARTIFACT_TEXTFILES_H

#include "Support/Status.h"

#include <string>
#include <vector>

namespace cohere2c {

struct TextFiles {
  /// Each one empty when the checkpoint has no such file.
  std::string tokenizerJson;        // tokenizer.json
  std::string tokenizerConfigJson;  // tokenizer_config.json
  std::string chatTemplate;         // chat_template.jinja
  std::string generationConfigJson; // generation_config.json
  /// The paths of the files read (those the checkpoint has): inputs that
  /// an output must not replace.
  std::vector<std::string> paths;

  /// No tokenizer: a config-only compile, or a checkpoint without one.
  bool hasTokenizer() const { return !tokenizerJson.empty(); }

  /// Reads the files above from the checkpoint folder `dir`; a missing file
  /// stays empty. Errors name the file: one that exists but cannot be
  /// read, is empty, or is larger than kMaxTextFileBytes.
  static StatusOr<TextFiles> readCheckpoint(const std::string &dir);
};

/// Why an artifact carries no tokenizer, for messages that say so.
inline constexpr const char *kNoTokenizerReason =
    "(compiled from a config alone, or from a checkpoint without "
    "tokenizer.json)";

/// Far above any released tokenizer.json (Command A's: about 20 MB).
constexpr size_t kMaxTextFileBytes = size_t(256) << 20;

/// The artifact's exported byte arrays (each with a `<name>_size` uint64),
/// present only for the files the checkpoint had.
inline constexpr const char *kTokenizerJsonSymbol = "cohere2c_tokenizer_json";
inline constexpr const char *kTokenizerConfigSymbol =
    "cohere2c_tokenizer_config_json";
inline constexpr const char *kChatTemplateSymbol = "cohere2c_chat_template";
inline constexpr const char *kGenerationConfigSymbol =
    "cohere2c_generation_config_json";

} // namespace cohere2c

#endif // COHERE2C_ARTIFACT_TEXTFILES_H
