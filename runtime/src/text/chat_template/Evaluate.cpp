//===- Evaluate.cpp - Expressions of a chat template
//-----------------------===//
//
// Each kind of expression as jinja2 compiles it: names resolve through the
// scopes (Undefined when unbound), obj.name and obj[key] go through the
// sandbox's getattr/getitem, filters and tests through their tables,
// `and` / `or` return an operand, comparisons chain as in Python.
//
//===----------------------------------------------------------------------===//
#include "text/chat_template/Interpreter.h"

#include "text/chat_template/Error.h"
#include "text/chat_template/Filters.h"
#include "text/chat_template/Operators.h"
#include "text/chat_template/Tests.h"

namespace cohere2c::text::jinja {

Value Interpreter::evaluate(const Expr &expr) {
  countStep();
  try {
    return evaluateUnlocated(expr);
  } catch (TemplateError &error) {
    error.locate(expr.loc);
    throw;
  }
}

Value Interpreter::evaluateUnlocated(const Expr &expr) {
  switch (expr.kind) {
  case Expr::Kind::Literal:
    return static_cast<const LiteralExpr &>(expr).value;
  case Expr::Kind::Name:
    return evaluateName(static_cast<const NameExpr &>(expr));
  case Expr::Kind::List:
  case Expr::Kind::Tuple:
  case Expr::Kind::Dict:
    return evaluateCollection(static_cast<const CollectionExpr &>(expr));
  case Expr::Kind::Attribute: {
    auto &attribute = static_cast<const AttributeExpr &>(expr);
    return getAttribute(evaluate(*attribute.object), attribute.name);
  }
  case Expr::Kind::Item: {
    auto &item = static_cast<const ItemExpr &>(expr);
    Value object = evaluate(*item.object);
    return getItem(object, evaluate(*item.index));
  }
  case Expr::Kind::Slice:
    return evaluateSlice(static_cast<const SliceExpr &>(expr));
  case Expr::Kind::Call:
    return evaluateCall(static_cast<const CallExpr &>(expr));
  case Expr::Kind::Filter:
  case Expr::Kind::Test:
    return evaluateFilter(static_cast<const FilterExpr &>(expr), nullptr);
  case Expr::Kind::Unary:
    return evaluateUnary(static_cast<const UnaryExpr &>(expr));
  case Expr::Kind::Binary:
  case Expr::Kind::And:
  case Expr::Kind::Or:
    return evaluateBinary(static_cast<const BinaryExpr &>(expr));
  case Expr::Kind::Concat:
    return evaluateConcat(static_cast<const ConcatExpr &>(expr));
  case Expr::Kind::Compare:
    return evaluateCompare(static_cast<const CompareExpr &>(expr));
  case Expr::Kind::Conditional:
    return evaluateConditional(static_cast<const ConditionalExpr &>(expr));
  }
  return Value();
}

Value Interpreter::evaluateName(const NameExpr &expr) {
  if (const Value *value = scope_->find(expr.name))
    return *value;
  return undefinedName(expr.name);
}

Value Interpreter::evaluateCollection(const CollectionExpr &expr) {
  if (expr.kind == Expr::Kind::Dict) {
    Dict dict;
    for (size_t i = 0; i + 1 < expr.items.size(); i += 2) {
      Value key = evaluate(*expr.items[i]);
      dict.set(std::move(key), evaluate(*expr.items[i + 1]));
    }
    return Value::dict(std::move(dict));
  }
  std::vector<Value> items;
  items.reserve(expr.items.size());
  for (const ExprPtr &item : expr.items)
    items.push_back(evaluate(*item));
  return expr.kind == Expr::Kind::List ? Value::list(std::move(items))
                                       : Value::tuple(std::move(items));
}

Value Interpreter::evaluateSlice(const SliceExpr &expr) {
  Value object = evaluate(*expr.object);
  auto part = [&](const ExprPtr &e) {
    return e ? evaluate(*e) : Value::none();
  };
  Value start = part(expr.start);
  Value stop = part(expr.stop);
  Value step = part(expr.step);
  return getSlice(object, start, stop, step);
}

CallArgs Interpreter::evaluateArgs(const Arguments &args) {
  CallArgs call;
  for (const ExprPtr &arg : args.positional)
    call.positional.push_back(evaluate(*arg));
  for (const auto &[name, arg] : args.keyword)
    call.keyword.emplace_back(name, evaluate(*arg));
  if (args.starArgs)
    for (Value &item : iterate(evaluate(*args.starArgs)))
      call.positional.push_back(std::move(item));
  if (args.starKwargs) {
    Value mapping = evaluate(*args.starKwargs);
    if (mapping.kind() != Value::Kind::Dict)
      throw TemplateError("argument after ** must be a mapping, not " +
                          typeName(mapping));
    for (const auto &[key, value] : mapping.asDict().entries()) {
      if (!key.isString())
        throw TemplateError("keywords must be strings");
      call.keyword.emplace_back(key.asString(), value);
    }
  }
  return call;
}

Value Interpreter::evaluateCall(const CallExpr &expr) {
  Value callee = evaluate(*expr.callee);
  CallArgs args = evaluateArgs(expr.args);
  if (callee.isUndefined())
    failUndefined(callee);
  if (callee.kind() != Value::Kind::Callable)
    throw TemplateError("'" + typeName(callee) + "' object is not callable");
  return callee.asCallable().call(*this, std::move(args));
}

Value Interpreter::evaluateFilter(const FilterExpr &expr,
                                  const Value *blockInput) {
  Value input;
  if (!expr.input)
    input = blockInput ? *blockInput : Value();
  else if (expr.input->kind == Expr::Kind::Filter && blockInput)
    input = evaluateFilter(static_cast<const FilterExpr &>(*expr.input),
                           blockInput);
  else
    input = evaluate(*expr.input);
  CallArgs args = evaluateArgs(expr.args);
  if (expr.kind == Expr::Kind::Test)
    return Value::boolean(applyTest(expr.name, input, std::move(args)));
  return applyFilter(expr.name, input, std::move(args));
}

Value Interpreter::evaluateUnary(const UnaryExpr &expr) {
  Value operand = evaluate(*expr.operand);
  switch (expr.op) {
  case UnaryExpr::Op::Neg:
    return negate(operand);
  case UnaryExpr::Op::Pos:
    return unaryPlus(operand);
  case UnaryExpr::Op::Not:
    break;
  }
  return Value::boolean(!truthy(operand));
}

Value Interpreter::evaluateBinary(const BinaryExpr &expr) {
  Value lhs = evaluate(*expr.lhs);
  if (expr.kind == Expr::Kind::And)
    return truthy(lhs) ? evaluate(*expr.rhs) : lhs;
  if (expr.kind == Expr::Kind::Or)
    return truthy(lhs) ? lhs : evaluate(*expr.rhs);
  Value rhs = evaluate(*expr.rhs);
  return binaryOp(expr.op, lhs, rhs);
}

Value Interpreter::evaluateConcat(const ConcatExpr &expr) {
  std::string text;
  for (const ExprPtr &part : expr.parts) {
    text += toStr(evaluate(*part));
    checkStringSize(text.size());
  }
  return Value::string(std::move(text));
}

Value Interpreter::evaluateCompare(const CompareExpr &expr) {
  Value lhs = evaluate(*expr.first);
  for (const auto &[op, operand] : expr.rest) {
    Value rhs = evaluate(*operand);
    if (!compare(op, lhs, rhs))
      return Value::boolean(false);
    lhs = std::move(rhs);
  }
  return Value::boolean(true);
}

Value Interpreter::evaluateConditional(const ConditionalExpr &expr) {
  if (truthy(evaluate(*expr.test)))
    return evaluate(*expr.then);
  if (expr.otherwise)
    return evaluate(*expr.otherwise);
  return Value::undefined("the inline if-expression on line " +
                          std::to_string(expr.loc.line) +
                          " evaluated to false and no else section was "
                          "defined.");
}

} // namespace cohere2c::text::jinja
