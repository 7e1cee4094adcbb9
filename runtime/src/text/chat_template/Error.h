//===- Error.h - Errors inside the template engine
//-------------------------===//
//
// Inside the engine errors are exceptions, so that a type error deep in a
// filter unwinds through the evaluator in one step; ChatTemplate's API turns
// them into Status values and none escapes it.
//
// A TemplateError thrown without a location (by a filter, an operator) gets
// the location of the innermost template node being evaluated as it unwinds.
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_TEXT_CHAT_TEMPLATE_ERROR_H
#define COHERE2C_TEXT_CHAT_TEMPLATE_ERROR_H

#include <cstdint>
#include <string>
#include <utility>

namespace cohere2c::text::jinja {

/// A position in the template: 1-based line and column (in characters).
struct SourceLoc {
  uint32_t line = 0;
  uint32_t column = 0;
  bool known() const { return line != 0; }
};

/// A syntax error, or a failure while rendering (jinja2's TypeError,
/// UndefinedError, SecurityError...).
class TemplateError {
public:
  explicit TemplateError(std::string message, SourceLoc loc = {})
      : message_(std::move(message)), loc_(loc) {}
  const std::string &message() const { return message_; }
  SourceLoc loc() const { return loc_; }
  void locate(SourceLoc loc) {
    if (!loc_.known())
      loc_ = loc;
  }

private:
  std::string message_;
  SourceLoc loc_;
};

/// raise_exception(message) called by the template (transformers' global):
/// the message is the template's own words and is reported unchanged.
class RaisedError {
public:
  explicit RaisedError(std::string message) : message_(std::move(message)) {}
  const std::string &message() const { return message_; }

private:
  std::string message_;
};

} // namespace cohere2c::text::jinja

#endif // COHERE2C_TEXT_CHAT_TEMPLATE_ERROR_H
