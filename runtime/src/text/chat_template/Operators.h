//===- Operators.h - Python's operators, attribute and item access --------===//
//
// What a template expression does with values, as Python and jinja2's
// ImmutableSandboxedEnvironment do it:
//   - arithmetic with Python semantics (/ is true division, // and % floor
//     toward negative infinity, str * int repeats, list + list concatenates);
//   - comparisons (ints, floats and bools compare as numbers; lists and
//     tuples compare item by item; mixing types in < is a TypeError);
//   - `in` (substring, item, key);
//   - obj.name prefers the Python attribute (a method) and falls back to
//     obj['name']; obj[key] prefers the item and falls back to the
//     attribute; what neither finds is Undefined; methods that would modify a
//     list or dict are refused, as the sandbox refuses them;
//   - iteration and slicing.
// Using Undefined in arithmetic, comparison, attribute access or a call is
// jinja2's UndefinedError, with its hint as the message.
//
// Every failure throws a TemplateError with Python's wording where there is
// one ("unsupported operand type(s) for +: 'int' and 'str'").
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_TEXT_CHAT_TEMPLATE_OPERATORS_H
#define COHERE2C_TEXT_CHAT_TEMPLATE_OPERATORS_H

#include "text/chat_template/Value.h"

#include <string>
#include <vector>

namespace cohere2c::text::jinja {

enum class BinaryOp { Add, Sub, Mul, Div, FloorDiv, Mod, Pow };
enum class CompareOp { Eq, Ne, Lt, Le, Gt, Ge, In, NotIn };

/// Throws jinja2's UndefinedError for using `undefined`.
[[noreturn]] void failUndefined(const Value &undefined);

/// jinja2's hints: "'name' is undefined", "'dict object' has no attribute
/// 'x'", "list object has no element 3".
Value undefinedName(const std::string &name);
Value undefinedAttribute(const Value &object, const std::string &name);
Value undefinedElement(const Value &object, const Value &key);

Value binaryOp(BinaryOp op, const Value &a, const Value &b);
Value negate(const Value &v);
Value unaryPlus(const Value &v);
bool compare(CompareOp op, const Value &a, const Value &b);
/// Python's a < b: what sorted(), min() and max() use.
bool lessThan(const Value &a, const Value &b);
/// Python's `item in container`.
bool contains(const Value &container, const Value &item);

/// jinja2's sandboxed getattr (obj.name) and getitem (obj[key]).
Value getAttribute(const Value &object, const std::string &name);
Value getItem(const Value &object, const Value &key);
/// obj[start:stop:step]; None for a part left out.
Value getSlice(const Value &object, const Value &start, const Value &stop,
               const Value &step);

/// The items a for loop over `v` visits: characters of a str, items of a
/// list or tuple, keys of a dict, the rest of an iterator (consuming it),
/// nothing for Undefined. Throws for values that are not iterable.
std::vector<Value> iterate(const Value &v);

/// len(v): throws for values without a length (generators, numbers).
int64_t length(const Value &v);

/// Python's int overflow is impossible; ours is an error.
int64_t checkedAdd(int64_t a, int64_t b);
int64_t checkedMul(int64_t a, int64_t b);

} // namespace cohere2c::text::jinja

#endif // COHERE2C_TEXT_CHAT_TEMPLATE_OPERATORS_H
