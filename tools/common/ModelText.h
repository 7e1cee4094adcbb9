//===- ModelText.h - The tools' view of the C API's text handle -----------===//
//
// cohere2c-run and cohere2c-tokenize reach the model's tokenizer and chat
// template through cohere2c/runtime.h alone; this wraps cohere2c_text_t the
// tools' way: statuses as Status values, ids and text as C++ values.
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_TOOLS_COMMON_MODELTEXT_H
#define COHERE2C_TOOLS_COMMON_MODELTEXT_H

#include "Support/Status.h"
#include "cohere2c/runtime.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace cohere2c {

/// Takes `status` (freeing it): success for OK, else its message.
Status statusOf(cohere2c_status_t status);

/// A model's tokenizer and chat template (cohere2c_text_t). Every call is
/// the C API's of the same name; errors are its messages.
class ModelText {
public:
  /// cohere2c_text_open: a checkpoint folder or a library.
  static StatusOr<ModelText> open(const std::string &path);
  /// cohere2c_artifact_text: errors if the artifact carries no tokenizer.
  static StatusOr<ModelText> of(const cohere2c_artifact_t *artifact);

  cohere2c_text_t *handle() const { return text_.get(); }

  /// tokenizer(text, add_special_tokens).
  StatusOr<std::vector<int32_t>> encode(std::string_view text,
                                        bool addSpecialTokens) const;
  /// decode(ids, skip_special_tokens).
  StatusOr<std::string> decode(const std::vector<int32_t> &ids,
                               bool skipSpecialTokens) const;
  /// apply_chat_template of `chat` ({"messages", "documents", "tools"};
  /// other fields are ignored), as text or as ids without special tokens.
  StatusOr<std::string> renderChat(const nlohmann::ordered_json &chat,
                                   bool addGenerationPrompt) const;
  StatusOr<std::vector<int32_t>> encodeChat(const nlohmann::ordered_json &chat,
                                            bool addGenerationPrompt) const;

private:
  explicit ModelText(TextHandle text) : text_(std::move(text)) {}
  TextHandle text_;
};

} // namespace cohere2c

#endif // COHERE2C_TOOLS_COMMON_MODELTEXT_H
