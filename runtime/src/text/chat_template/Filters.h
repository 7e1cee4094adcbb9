//===- Filters.h - jinja2's filters (`x | tojson`, `s | trim`)
//-------------===//
//
// The filters of jinja2 3.1 (jinja2/filters.py) with their Python semantics,
// and transformers' tojson:
//   abs attr capitalize center count d default dictsort e escape first float
//   forceescape format indent int items join last length list lower map max
//   min reject rejectattr replace reverse round safe select selectattr sort
//   string sum title tojson trim truncate unique upper wordcount
// Filters that return generators in jinja2 (map, select, selectattr, reject,
// rejectattr, unique, items, reverse of a list) return one-shot iterators
// here too, so `x|select(...)` is always true and has no length, as there.
// Autoescape is off (transformers' environment): safe returns its input as a
// string, but escape still escapes HTML, as jinja2's does.
//
// Not supported (parse error "unknown filter"): batch filesizeformat groupby
// pprint random slice striptags urlencode urlize wordwrap xmlattr.
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_TEXT_CHAT_TEMPLATE_FILTERS_H
#define COHERE2C_TEXT_CHAT_TEMPLATE_FILTERS_H

#include "text/chat_template/Args.h"
#include "text/chat_template/Value.h"

#include <string>
#include <string_view>

namespace cohere2c::text::jinja {

bool isKnownFilter(std::string_view name);

/// `input | name(args)`. Throws a TemplateError for an unknown filter, bad
/// arguments or a failing operation, with Python's message.
Value applyFilter(const std::string &name, const Value &input, CallArgs &&args);

} // namespace cohere2c::text::jinja

#endif // COHERE2C_TEXT_CHAT_TEMPLATE_FILTERS_H
