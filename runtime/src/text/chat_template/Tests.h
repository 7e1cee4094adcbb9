//===- Tests.h - jinja2's tests (`x is defined`, `n is divisibleby 3`) ----===//
//
// The tests of jinja2 3.1 (jinja2/tests.py) with their Python semantics:
// defined undefined none boolean true false integer float number string
// mapping sequence iterable callable sameas lower upper even odd divisibleby
// in filter test, and the comparisons eq equalto == ne != lt lessthan < le
// <= gt greaterthan > ge >=. Not supported: escaped (there is no Markup).
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_TEXT_CHAT_TEMPLATE_TESTS_H
#define COHERE2C_TEXT_CHAT_TEMPLATE_TESTS_H

#include "text/chat_template/Args.h"
#include "text/chat_template/Value.h"

#include <string>
#include <string_view>

namespace cohere2c::text::jinja {

bool isKnownTest(std::string_view name);

/// `input is name(args)`. Throws a TemplateError for an unknown test or a
/// failing operation (`undefined is even`).
bool applyTest(const std::string &name, const Value &input, CallArgs &&args);

} // namespace cohere2c::text::jinja

#endif // COHERE2C_TEXT_CHAT_TEMPLATE_TESTS_H
