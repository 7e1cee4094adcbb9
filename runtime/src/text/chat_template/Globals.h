//===- Globals.h - The functions every chat template can call -------------===//
//
// jinja2's default globals that chat templates use (range, dict,
// namespace) and the two transformers adds (raise_exception, strftime_now):
//   - range(stop) / range(start, stop[, step]): a list here (Python's range
//     object prints differently but iterates and measures the same); more
//     than 100000 items is an error, as in the sandbox (MAX_RANGE);
//   - dict(mapping_or_pairs, **kwargs), namespace(mapping, **kwargs);
//   - raise_exception(message): throws RaisedError(str(message));
//   - strftime_now(format): datetime.now().strftime(format), local time.
// Not provided: lipsum, cycler, joiner (calling them is "'x' is
// undefined").
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_TEXT_CHAT_TEMPLATE_GLOBALS_H
#define COHERE2C_TEXT_CHAT_TEMPLATE_GLOBALS_H

#include "text/chat_template/Scope.h"

namespace cohere2c::text::jinja {

/// Binds the globals in `scope`.
void addGlobals(Scope &scope);

} // namespace cohere2c::text::jinja

#endif // COHERE2C_TEXT_CHAT_TEMPLATE_GLOBALS_H
