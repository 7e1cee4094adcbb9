//===- SequenceFilters.cpp - jinja2's filters over sequences --------------===//
#include "text/chat_template/SequenceFilters.h"

#include "text/chat_template/Error.h"
#include "text/chat_template/Filters.h"
#include "text/chat_template/Operators.h"
#include "text/chat_template/PyString.h"
#include "text/chat_template/Tests.h"
#include "text/chat_template/Unicode.h"

#include <algorithm>
#include <functional>

namespace cohere2c::text::jinja {

namespace {

using Getter = std::function<Value(const Value &)>;

/// jinja2's _prepare_attribute_parts: "a.0.b" -> ['a', 0, 'b'].
std::vector<Value> attributeParts(const Value &attribute) {
  if (attribute.isNone())
    return {};
  if (!attribute.isString())
    return {attribute};
  std::vector<Value> parts;
  for (const std::string &part :
       pystr::split(attribute.asString(), std::string("."), -1, false)) {
    bool digits = !part.empty() &&
                  part.find_first_not_of("0123456789") == std::string::npos;
    parts.push_back(digits && part.size() < 18
                        ? Value::integer(std::stoll(part))
                        : Value::string(part));
  }
  return parts;
}

/// ignore_case: strings compare lowercased unless case_sensitive.
Value ignoreCase(const Value &v) {
  return v.isString() ? Value::string(pystr::lower(v.asString())) : v;
}

/// make_attrgetter: the item's attribute path, then the postprocess;
/// `fallback` replaces an Undefined step (map's default=).
Getter attrGetter(const Value &attribute, bool lowerCase,
                  const Value *fallback = nullptr) {
  std::vector<Value> parts = attributeParts(attribute);
  Value defaultValue = fallback ? *fallback : Value();
  bool hasDefault = fallback && !fallback->isNone();
  return [parts, lowerCase, defaultValue, hasDefault](const Value &item) {
    Value v = item;
    for (const Value &part : parts) {
      v = getItem(v, part);
      if (hasDefault && v.isUndefined())
        v = defaultValue;
    }
    return lowerCase ? ignoreCase(v) : v;
  };
}

/// make_multi_attrgetter: "a,b" gives a list key [item.a, item.b].
Getter multiAttrGetter(const Value &attribute, bool lowerCase) {
  if (!attribute.isString())
    return attrGetter(attribute, lowerCase);
  std::vector<Getter> getters;
  for (const std::string &part :
       pystr::split(attribute.asString(), std::string(","), -1, false))
    getters.push_back(attrGetter(Value::string(part), lowerCase));
  return [getters](const Value &item) {
    std::vector<Value> key;
    for (const Getter &getter : getters)
      key.push_back(getter(item));
    return Value::list(std::move(key));
  };
}

/// prepare_select_or_reject + select_or_reject: filters items by a test
/// (or truthiness) of the item or of its attribute.
Value selectOrReject(const Value &input, CallArgs &&args, bool wantTrue,
                     bool byAttribute) {
  if (!truthy(input))
    return Value::iterator({});
  std::vector<Value> positional = std::move(args.positional);
  size_t next = 0;
  Getter transform = [](const Value &v) { return v; };
  if (byAttribute) {
    if (positional.empty())
      throw TemplateError("Missing parameter for attribute name");
    transform = attrGetter(positional[next++], false);
  }
  std::optional<std::string> test;
  if (next < positional.size()) {
    if (!positional[next].isString())
      throw TemplateError("test name must be a string");
    test = positional[next++].asString();
  }
  CallArgs testArgs{{positional.begin() + static_cast<std::ptrdiff_t>(next),
                     positional.end()},
                    std::move(args.keyword)};
  std::vector<Value> kept;
  for (const Value &item : iterate(input)) {
    Value subject = transform(item);
    bool passed =
        test ? applyTest(*test, subject, CallArgs(testArgs)) : truthy(subject);
    if (passed == wantTrue)
      kept.push_back(item);
  }
  return Value::iterator(std::move(kept));
}

/// _min_or_max: the first item whose key is smallest (or largest).
Value minOrMax(const Value &input, CallArgs &&args, bool wantMax) {
  BoundArgs bound(wantMax ? "max" : "min", std::move(args),
                  {"case_sensitive", "attribute"});
  std::vector<Value> items = iterate(input);
  if (items.empty())
    return Value::undefined("No aggregated item, sequence was empty.");
  Getter key = attrGetter(bound.getOr(1, Value::none()),
                          !truthy(bound.getOr(0, Value::boolean(false))));
  size_t best = 0;
  Value bestKey = key(items[0]);
  for (size_t i = 1; i < items.size(); ++i) {
    Value k = key(items[i]);
    if (wantMax ? lessThan(bestKey, k) : lessThan(k, bestKey)) {
      best = i;
      bestKey = k;
    }
  }
  return items[best];
}

} // namespace

// sync_do_first
Value filterFirst(const Value &input, CallArgs &&args) {
  expectNoArgs("first", args);
  if (input.kind() == Value::Kind::Iterator) {
    const std::vector<Value> &items = input.iteratorItems();
    size_t position = input.iteratorPosition();
    if (position < items.size()) {
      input.advanceIterator(1);
      return items[position];
    }
  } else {
    std::vector<Value> items = iterate(input);
    if (!items.empty())
      return items.front();
  }
  return Value::undefined("No first item, sequence was empty.");
}

// do_last: next(iter(reversed(seq))).
Value filterLast(const Value &input, CallArgs &&args) {
  expectNoArgs("last", args);
  if (input.kind() == Value::Kind::Iterator)
    throw TemplateError("'" + typeName(input) + "' object is not reversible");
  std::vector<Value> items = iterate(input);
  if (items.empty())
    return Value::undefined("No last item, sequence was empty.");
  return items.back();
}

// sync_do_join: str(d).join(map(str, value)).
Value filterJoin(const Value &input, CallArgs &&args) {
  BoundArgs bound("join", std::move(args), {"d", "attribute"});
  std::string separator = toStr(bound.getOr(0, Value::string("")));
  std::vector<Value> items = iterate(input);
  if (const Value *attribute = bound.get(1);
      attribute && !attribute->isNone()) {
    Getter getter = attrGetter(*attribute, false);
    for (Value &item : items)
      item = getter(item);
  }
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i)
      out += separator;
    out += toStr(items[i]);
    checkStringSize(out.size());
  }
  return Value::string(std::move(out));
}

// sync_do_list
Value filterList(const Value &input, CallArgs &&args) {
  expectNoArgs("list", args);
  return Value::list(iterate(input));
}

// sync_do_map + prepare_map
Value filterMap(const Value &input, CallArgs &&args) {
  if (!truthy(input))
    return Value::iterator({});
  Getter function;
  if (args.positional.empty()) {
    const Value *attribute = nullptr, *fallback = nullptr;
    for (const auto &[name, value] : args.keyword) {
      if (name == "attribute")
        attribute = &value;
      else if (name == "default")
        fallback = &value;
      else
        throw TemplateError("Unexpected keyword argument '" + name + "'");
    }
    if (!attribute)
      throw TemplateError("map requires a filter argument");
    function = attrGetter(*attribute, false, fallback);
  } else {
    if (!args.positional[0].isString())
      throw TemplateError("map requires a filter name");
    std::string filter = args.positional[0].asString();
    CallArgs rest{{args.positional.begin() + 1, args.positional.end()},
                  std::move(args.keyword)};
    function = [filter, rest](const Value &item) {
      return applyFilter(filter, item, CallArgs(rest));
    };
  }
  std::vector<Value> mapped;
  for (const Value &item : iterate(input))
    mapped.push_back(function(item));
  return Value::iterator(std::move(mapped));
}

Value filterSelect(const Value &input, CallArgs &&args) {
  return selectOrReject(input, std::move(args), true, false);
}

Value filterReject(const Value &input, CallArgs &&args) {
  return selectOrReject(input, std::move(args), false, false);
}

Value filterSelectAttr(const Value &input, CallArgs &&args) {
  return selectOrReject(input, std::move(args), true, true);
}

Value filterRejectAttr(const Value &input, CallArgs &&args) {
  return selectOrReject(input, std::move(args), false, true);
}

// do_sort: sorted(value, key=..., reverse=...), stable both ways.
Value filterSort(const Value &input, CallArgs &&args) {
  BoundArgs bound("sort", std::move(args),
                  {"reverse", "case_sensitive", "attribute"});
  bool reverse = truthy(bound.getOr(0, Value::boolean(false)));
  Getter key = multiAttrGetter(bound.getOr(2, Value::none()),
                               !truthy(bound.getOr(1, Value::boolean(false))));
  std::vector<Value> items = iterate(input);
  std::vector<std::pair<Value, Value>> keyed;
  for (Value &item : items)
    keyed.emplace_back(key(item), std::move(item));
  std::stable_sort(keyed.begin(), keyed.end(),
                   [reverse](const auto &a, const auto &b) {
                     return reverse ? lessThan(b.first, a.first)
                                    : lessThan(a.first, b.first);
                   });
  std::vector<Value> sorted;
  for (auto &entry : keyed)
    sorted.push_back(std::move(entry.second));
  return Value::list(std::move(sorted));
}

// do_unique: the first item of each key, keys compared as set members.
Value filterUnique(const Value &input, CallArgs &&args) {
  BoundArgs bound("unique", std::move(args), {"case_sensitive", "attribute"});
  Getter key = attrGetter(bound.getOr(1, Value::none()),
                          !truthy(bound.getOr(0, Value::boolean(false))));
  Dict seen;
  std::vector<Value> kept;
  for (const Value &item : iterate(input)) {
    Value k = key(item);
    if (seen.find(k))
      continue;
    seen.set(k, Value::none());
    kept.push_back(item);
  }
  return Value::iterator(std::move(kept));
}

Value filterMin(const Value &input, CallArgs &&args) {
  return minOrMax(input, std::move(args), false);
}

Value filterMax(const Value &input, CallArgs &&args) {
  return minOrMax(input, std::move(args), true);
}

// sync_do_sum: sum(iterable, start) with Python's + (no str start).
Value filterSum(const Value &input, CallArgs &&args) {
  BoundArgs bound("sum", std::move(args), {"attribute", "start"});
  Value total = bound.getOr(1, Value::integer(0));
  if (total.isString())
    throw TemplateError("sum() can't sum strings [use ''.join(seq) instead]");
  std::vector<Value> items = iterate(input);
  if (const Value *attribute = bound.get(0);
      attribute && !attribute->isNone()) {
    Getter getter = attrGetter(*attribute, false);
    for (Value &item : items)
      item = getter(item);
  }
  for (const Value &item : items)
    total = binaryOp(BinaryOp::Add, total, item);
  return total;
}

// do_dictsort
Value filterDictSort(const Value &input, CallArgs &&args) {
  BoundArgs bound("dictsort", std::move(args),
                  {"case_sensitive", "by", "reverse"});
  if (input.isUndefined())
    failUndefined(input);
  if (input.kind() != Value::Kind::Dict)
    throw TemplateError("'" + typeName(input) +
                        "' object has no attribute "
                        "'items'");
  bool lowerCase = !truthy(bound.getOr(0, Value::boolean(false)));
  Value by = bound.getOr(1, Value::string("key"));
  if (!by.isString() || (by.asString() != "key" && by.asString() != "value"))
    throw TemplateError("You can only sort by either \"key\" or \"value\"");
  size_t position = by.asString() == "key" ? 0 : 1;
  bool reverse = truthy(bound.getOr(2, Value::boolean(false)));
  std::vector<Value> pairs;
  for (const auto &[key, value] : input.asDict().entries())
    pairs.push_back(Value::tuple({key, value}));
  auto keyOf = [&](const Value &pair) {
    const Value &v = pair.items()[position];
    return lowerCase ? ignoreCase(v) : v;
  };
  std::stable_sort(pairs.begin(), pairs.end(),
                   [&](const Value &a, const Value &b) {
                     return reverse ? lessThan(keyOf(b), keyOf(a))
                                    : lessThan(keyOf(a), keyOf(b));
                   });
  return Value::list(std::move(pairs));
}

// do_items
Value filterItems(const Value &input, CallArgs &&args) {
  expectNoArgs("items", args);
  if (input.isUndefined())
    return Value::iterator({});
  if (input.kind() != Value::Kind::Dict)
    throw TemplateError("Can only get item pairs from a mapping.");
  std::vector<Value> pairs;
  for (const auto &[key, value] : input.asDict().entries())
    pairs.push_back(Value::tuple({key, value}));
  return Value::iterator(std::move(pairs));
}

// do_reverse: a reversed string, a reverse iterator over a sequence or
// dict, or (for a generator, which reversed() refuses) a reversed list.
Value filterReverse(const Value &input, CallArgs &&args) {
  expectNoArgs("reverse", args);
  if (input.isString()) {
    std::u32string text = decodeUtf8(input.asString());
    std::reverse(text.begin(), text.end());
    return Value::string(encodeUtf8(text));
  }
  bool isGenerator = input.kind() == Value::Kind::Iterator;
  std::vector<Value> items = iterate(input);
  std::reverse(items.begin(), items.end());
  if (isGenerator)
    return Value::list(std::move(items));
  const char *type = input.kind() == Value::Kind::List ? "list_reverseiterator"
                     : input.kind() == Value::Kind::Dict
                         ? "dict_reversekeyiterator"
                         : "reversed";
  return Value::iterator(std::move(items), type);
}

} // namespace cohere2c::text::jinja
