//===- Lexer.h - Tokens of a chat template
//---------------------------------===//
//
// jinja2's lexer (jinja2/lexer.py) with transformers' settings:
//   - newlines normalized to \n, one trailing newline dropped
//     (keep_trailing_newline=False);
//   - trim_blocks: the first newline after a block tag or comment is
//     dropped ({% ... +%} keeps it);
//   - lstrip_blocks: spaces and tabs from the start of a line up to a block
//     tag or comment are dropped ({%+ keeps them); not before {{ }};
//   - {%- -%} {{- -}} {#- -#} strip all whitespace on that side;
//   - {% raw %}...{% endraw %} is text.
// Inside tags: names, strings with Python's escapes, integers and floats
// (with _ separators, 0x/0o/0b), and operators; brackets must balance.
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_TEXT_CHAT_TEMPLATE_LEXER_H
#define COHERE2C_TEXT_CHAT_TEMPLATE_LEXER_H

#include "text/chat_template/Error.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cohere2c::text::jinja {

struct Token {
  enum class Type {
    Data,
    VariableBegin,
    VariableEnd,
    BlockBegin,
    BlockEnd,
    Name,
    String,
    Integer,
    Float,
    Operator,
    Eof,
  };
  Type type;
  /// Data and strings: the text; names and operators: the spelling.
  std::string text;
  int64_t integer = 0;
  double real = 0;
  SourceLoc loc;

  bool isOperator(std::string_view op) const {
    return type == Type::Operator && text == op;
  }
  bool isName(std::string_view name) const {
    return type == Type::Name && text == name;
  }
};

/// Splits `source` into tokens ending with Eof. Throws a TemplateError with
/// the position for an unterminated comment or raw block, an unexpected
/// character, unbalanced brackets, or a bad escape in a string.
std::vector<Token> tokenize(std::string_view source);

} // namespace cohere2c::text::jinja

#endif // COHERE2C_TEXT_CHAT_TEMPLATE_LEXER_H
