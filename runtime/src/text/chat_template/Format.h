//===- Format.h - Python's printf-style and str.format formatting ---------===//
//
// `'%s: %d' % (a, b)` and the format filter (jinja2's do_format is
// `value % args`), and `'{}: {name}'.format(a, name=b)` (the sandbox's
// SandboxedFormatter, which is Python's string.Formatter).
//
// printf-style: conversions s r a d i u f F e E g G x X o c and %%, with
// flags, width and precision, and %(name)s keys into a dict argument.
// str.format: auto and manual field numbers, keyword names, attribute and
// index lookups (.name, [key]), !s / !r / !a, and format specs
// [[fill]align][sign][#][0][width][,_][.precision][type].
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_TEXT_CHAT_TEMPLATE_FORMAT_H
#define COHERE2C_TEXT_CHAT_TEMPLATE_FORMAT_H

#include "text/chat_template/Args.h"
#include "text/chat_template/Value.h"

#include <string>

namespace cohere2c::text::jinja {

/// `format % args`: `args` is a tuple of values, a dict for %(name)s, or one
/// value. Throws Python's TypeError/ValueError messages ("not enough
/// arguments for format string").
std::string percentFormat(const std::string &format, const Value &args);

/// `format.format(*args.positional, **args.keyword)`.
std::string braceFormat(const std::string &format, const CallArgs &args);

} // namespace cohere2c::text::jinja

#endif // COHERE2C_TEXT_CHAT_TEMPLATE_FORMAT_H
