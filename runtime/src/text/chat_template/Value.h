//===- Value.h - The values a chat template computes with ----------------===//
//
// The Python objects a jinja2 template sees when transformers renders it:
// None, bool, int, float, str, list, tuple, dict (insertion-ordered), the
// generators that filters such as selectattr return, jinja2's Namespace, a
// for loop's `loop`, callables (macros, methods, globals), and Undefined.
//
// Strings, lists, tuples and dicts are immutable once built (the sandbox
// forbids list.append and friends), so a Value shares them by pointer and
// copies are cheap. Namespaces, loops and generators are mutable and shared,
// as the Python objects are. Python's unbounded ints are int64 here; an
// overflow is an error, never a wrong number.
//
// Printing follows Python: str() for {{ }} output, repr() inside containers
// ('a', None, True, 1.0, 1e-05), and a float prints as its shortest repr.
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_TEXT_CHAT_TEMPLATE_VALUE_H
#define COHERE2C_TEXT_CHAT_TEMPLATE_VALUE_H

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace cohere2c::text::jinja {

class Callable;
class Dict;
class Interpreter;
class LoopContext;
class Namespace;
struct CallArgs;

/// No string a template builds may exceed this (the render's output cap).
inline constexpr size_t kMaxStringBytes = size_t(64) << 20;
/// No list a template builds may exceed this many items.
inline constexpr size_t kMaxItems = size_t(1) << 22;
/// Containers nest at most this deep (Python's recursion limit is 1000
/// frames; jinja2 fails well before on deeper data).
inline constexpr unsigned kMaxNesting = 256;

/// Throws a TemplateError when a string of `bytes` would exceed the cap.
void checkStringSize(size_t bytes);

class Value {
public:
  enum class Kind : uint8_t {
    Undefined,
    None,
    Bool,
    Int,
    Float,
    String,
    List,
    Tuple,
    Iterator,
    Dict,
    Namespace,
    Loop,
    Callable,
  };

  /// Undefined, with no hint.
  Value() = default;

  /// `hint` is jinja2's message when the value is used ("'x' is
  /// undefined"); `unsafe` marks the sandbox's refusal of an attribute
  /// (list.append), which fails as SecurityError when called.
  static Value undefined(std::string hint, bool unsafe = false);
  static Value none();
  static Value boolean(bool b);
  static Value integer(int64_t i);
  static Value real(double d);
  static Value string(std::string s);
  /// Lists and tuples: throws when `items` nest deeper than kMaxNesting.
  static Value list(std::vector<Value> items);
  static Value tuple(std::vector<Value> items);
  /// A one-shot iterator (a generator in Python): iterating consumes it.
  /// `typeName` is the Python type jinja2's filter returns.
  static Value iterator(std::vector<Value> items,
                        const char *typeName = "generator");
  static Value dict(Dict d);
  static Value ns(std::shared_ptr<Namespace> n);
  static Value loop(std::shared_ptr<LoopContext> l);
  static Value callable(std::shared_ptr<const Callable> c);

  Kind kind() const { return kind_; }
  bool isUndefined() const { return kind_ == Kind::Undefined; }
  bool isNone() const { return kind_ == Kind::None; }
  bool isBool() const { return kind_ == Kind::Bool; }
  bool isString() const { return kind_ == Kind::String; }
  /// int or bool (a bool is an int in Python).
  bool isIntegral() const { return kind_ == Kind::Int || kind_ == Kind::Bool; }
  /// int, bool or float.
  bool isNumber() const { return isIntegral() || kind_ == Kind::Float; }
  /// list or tuple.
  bool isSequence() const {
    return kind_ == Kind::List || kind_ == Kind::Tuple;
  }

  bool asBool() const { return b_; }
  /// int or bool.
  int64_t asInt() const { return kind_ == Kind::Bool ? b_ : i_; }
  /// Any number, as a double.
  double asDouble() const {
    return kind_ == Kind::Float ? f_ : static_cast<double>(asInt());
  }
  const std::string &asString() const;
  /// The items of a list or tuple.
  const std::vector<Value> &items() const;
  const Dict &asDict() const;
  Namespace &asNamespace() const;
  LoopContext &asLoop() const;
  std::shared_ptr<LoopContext> shareLoop() const;
  const Callable &asCallable() const;
  /// The remaining items of an iterator; advance() consumes `n` of them.
  const std::vector<Value> &iteratorItems() const;
  size_t iteratorPosition() const;
  void advanceIterator(size_t n) const;
  const char *iteratorTypeName() const;

  const std::string &undefinedHint() const;
  bool undefinedIsUnsafe() const;

  /// Nesting depth of a list, tuple or dict; 0 for anything else.
  unsigned depth() const;
  /// The object's identity for `is sameas` (null for unboxed values).
  const void *identity() const { return ptr_.get(); }

private:
  Kind kind_ = Kind::Undefined;
  union {
    bool b_;
    int64_t i_ = 0;
    double f_;
  };
  std::shared_ptr<void> ptr_;
};

/// A dict: insertion-ordered, keyed by hashable values with Python's
/// equality (1, 1.0 and True are one key).
class Dict {
public:
  using Entry = std::pair<Value, Value>;

  const Value *find(const Value &key) const;
  const Value *find(std::string_view key) const;
  /// Replaces the value of an existing key, else appends. Throws for an
  /// unhashable key (list, dict) or one nested too deep.
  void set(Value key, Value value);
  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  const std::vector<Entry> &entries() const { return entries_; }
  unsigned depth() const { return depth_; }

private:
  /// Up to this many entries a scan beats hashing the key (a message has
  /// a handful).
  static constexpr size_t kLinearSearchMax = 8;

  std::vector<Entry> entries_;
  std::unordered_map<std::string, size_t> stringKeys_;
  unsigned depth_ = 1;
};

/// jinja2's namespace(): the one mutable object a template can assign to
/// ({% set ns.attr = ... %}), so it carries values out of loops.
class Namespace {
public:
  Dict attributes;
};

/// A function the template can call: a macro, a method bound to its object,
/// a global such as raise_exception.
class Callable {
public:
  virtual ~Callable() = default;
  /// Python's type name: 'Macro', 'builtin_function_or_method'.
  virtual const char *typeName() const = 0;
  /// Python's repr: "<Macro 'name'>", "<built-in method strip of str ...>".
  virtual std::string repr() const = 0;
  virtual Value call(Interpreter &interpreter, CallArgs &&args) const = 0;
};

/// Python truthiness; generators, namespaces and callables are true.
bool truthy(const Value &v);
/// Python's type name ('str', 'NoneType', 'generator', 'Undefined').
std::string typeName(const Value &v);
/// Python's str(): what {{ v }} prints.
std::string toStr(const Value &v);
/// Python's repr(): how v prints inside a list or dict.
std::string toRepr(const Value &v);
/// float.__repr__: the shortest string that reads back as `d`.
std::string formatFloat(double d);
/// Python's ==, across int, float and bool; lists and tuples are unequal.
bool equals(const Value &a, const Value &b);

} // namespace cohere2c::text::jinja

#endif // COHERE2C_TEXT_CHAT_TEMPLATE_VALUE_H
