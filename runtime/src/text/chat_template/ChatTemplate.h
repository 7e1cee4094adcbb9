//===- ChatTemplate.h - Hugging Face chat templates (a Jinja2 subset) -----===//
//
// Renders a chat template as Hugging Face transformers' apply_chat_template
// does with jinja2: an Environment with trim_blocks, lstrip_blocks and the
// loop controls ({% break %}, {% continue %}); the globals raise_exception
// and strftime_now; the filter tojson as Python's json.dumps(value,
// ensure_ascii=False) (indent, separators and sort_keys honoured); values
// printed as Python prints them (None, True, ['a', 1]).
//
// Supported: everything Command R7B's template uses (macros, namespace(),
// set, for with loop.*, if/elif/else, filters, string methods, slicing, in /
// not in, break, raise_exception, whitespace control, comments) and what
// other released templates commonly use. A construct outside it is an error
// with line and column, at parse time where the parser can tell.
//
// Immutable after parse(); render() is safe from many threads at once.
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_TEXT_CHAT_TEMPLATE_CHATTEMPLATE_H
#define COHERE2C_TEXT_CHAT_TEMPLATE_CHATTEMPLATE_H

#include "Support/Status.h"

#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <string_view>

namespace cohere2c::text {

class ChatTemplate {
public:
  /// `source` is the template text; `name` names it in errors:
  /// "chat_template.jinja:12:5: unknown tag 'include'".
  static StatusOr<std::shared_ptr<const ChatTemplate>>
  parse(std::string_view source, const std::string &name);
  ~ChatTemplate();

  /// Renders with the variables of `context`, a JSON object (messages,
  /// add_generation_prompt, documents, tools, bos_token, eos_token, ...).
  /// Errors: raise_exception(message) gives exactly "MESSAGE" prefixed by
  /// kRaisedPrefix; any other failure (an undefined function, a type error)
  /// names the template, line and column.
  StatusOr<std::string> render(const nlohmann::json &context) const;
  /// The same with the objects' key order kept: nlohmann::json sorts keys,
  /// Python's json.loads keeps them in order, and `tojson` prints them in
  /// that order (a tool call's {"q": ..., "n": ...} stays so). Parse
  /// requests with nlohmann::ordered_json to render exactly as
  /// transformers does.
  StatusOr<std::string> render(const nlohmann::ordered_json &context) const;

  /// The prefix of a render error raised by the template itself.
  static constexpr const char *kRaisedPrefix = "the chat template raised: ";

  struct Impl;

private:
  explicit ChatTemplate(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

} // namespace cohere2c::text

#endif // COHERE2C_TEXT_CHAT_TEMPLATE_CHATTEMPLATE_H
