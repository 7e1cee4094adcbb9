//===- ParseExpression.cpp - Expressions of a chat template ---------------===//
//
// jinja2's parser, from parse_expression down to parse_primary, function
// for function; each comment names the jinja2 method it follows.
//
//===----------------------------------------------------------------------===//
#include "text/chat_template/Parser.h"

#include "text/chat_template/Filters.h"
#include "text/chat_template/Tests.h"

namespace cohere2c::text::jinja {

namespace {

ExprPtr binary(Expr::Kind kind, SourceLoc loc, BinaryOp op, ExprPtr lhs,
               ExprPtr rhs) {
  return std::make_unique<BinaryExpr>(kind, loc, op, std::move(lhs),
                                      std::move(rhs));
}

bool isOneOf(const Token &token, std::initializer_list<std::string_view> ops) {
  for (std::string_view op : ops)
    if (token.isOperator(op))
      return true;
  return false;
}

} // namespace

// parse_expression
ExprPtr Parser::parseExpression(bool withCondExpr) {
  DepthGuard guard(*this, exprDepth_, kMaxExpressionDepth);
  return withCondExpr ? parseCondExpr() : parseOr();
}

// is_tuple_end
bool Parser::tupleEnds() const {
  const Token &token = current();
  return token.type == Token::Type::VariableEnd ||
         token.type == Token::Type::BlockEnd || token.isOperator(")");
}

// parse_tuple
ExprPtr Parser::parseTuple(bool withCondExpr, bool explicitParens) {
  SourceLoc loc = current().loc;
  std::vector<ExprPtr> items;
  bool isTuple = false;
  while (true) {
    if (!items.empty())
      expectOperator(",");
    if (tupleEnds())
      break;
    items.push_back(parseExpression(withCondExpr));
    if (!current().isOperator(","))
      break;
    isTuple = true;
  }
  if (!isTuple) {
    if (!items.empty())
      return std::move(items[0]);
    if (!explicitParens)
      fail("expected an expression", current());
  }
  auto tuple = std::make_unique<CollectionExpr>(Expr::Kind::Tuple, loc);
  tuple->items = std::move(items);
  return tuple;
}

// parse_condexpr
ExprPtr Parser::parseCondExpr() {
  ExprPtr expr = parseOr();
  while (current().isName("if")) {
    auto cond = std::make_unique<ConditionalExpr>(next().loc);
    cond->then = std::move(expr);
    cond->test = parseOr();
    if (skipName("else"))
      cond->otherwise = parseCondExpr();
    expr = std::move(cond);
  }
  return expr;
}

// parse_or
ExprPtr Parser::parseOr() {
  ExprPtr left = parseAnd();
  while (current().isName("or")) {
    SourceLoc loc = next().loc;
    left =
        binary(Expr::Kind::Or, loc, BinaryOp::Add, std::move(left), parseAnd());
  }
  return left;
}

// parse_and
ExprPtr Parser::parseAnd() {
  ExprPtr left = parseNot();
  while (current().isName("and")) {
    SourceLoc loc = next().loc;
    left = binary(Expr::Kind::And, loc, BinaryOp::Add, std::move(left),
                  parseNot());
  }
  return left;
}

// parse_not
ExprPtr Parser::parseNot() {
  if (current().isName("not")) {
    SourceLoc loc = next().loc;
    DepthGuard guard(*this, exprDepth_, kMaxExpressionDepth);
    return std::make_unique<UnaryExpr>(loc, UnaryExpr::Op::Not, parseNot());
  }
  return parseCompare();
}

// parse_compare
ExprPtr Parser::parseCompare() {
  SourceLoc loc = current().loc;
  ExprPtr expr = parseMath1();
  std::unique_ptr<CompareExpr> compare;
  while (true) {
    const Token &token = current();
    CompareOp op;
    if (token.isOperator("=="))
      op = CompareOp::Eq;
    else if (token.isOperator("!="))
      op = CompareOp::Ne;
    else if (token.isOperator("<"))
      op = CompareOp::Lt;
    else if (token.isOperator("<="))
      op = CompareOp::Le;
    else if (token.isOperator(">"))
      op = CompareOp::Gt;
    else if (token.isOperator(">="))
      op = CompareOp::Ge;
    else if (token.isName("in"))
      op = CompareOp::In;
    else if (token.isName("not") && peek().isName("in"))
      op = CompareOp::NotIn;
    else
      break;
    next();
    if (op == CompareOp::NotIn)
      next();
    if (!compare)
      compare = std::make_unique<CompareExpr>(loc, std::move(expr));
    compare->rest.emplace_back(op, parseMath1());
  }
  if (compare)
    return compare;
  return expr;
}

// parse_math1
ExprPtr Parser::parseMath1() {
  ExprPtr left = parseConcat();
  while (isOneOf(current(), {"+", "-"})) {
    const Token &op = next();
    BinaryOp kind = op.text == "+" ? BinaryOp::Add : BinaryOp::Sub;
    left = binary(Expr::Kind::Binary, op.loc, kind, std::move(left),
                  parseConcat());
  }
  return left;
}

// parse_concat
ExprPtr Parser::parseConcat() {
  SourceLoc loc = current().loc;
  ExprPtr first = parseMath2();
  if (!current().isOperator("~"))
    return first;
  auto concat = std::make_unique<ConcatExpr>(loc);
  concat->parts.push_back(std::move(first));
  while (skipOperator("~"))
    concat->parts.push_back(parseMath2());
  return concat;
}

// parse_math2
ExprPtr Parser::parseMath2() {
  ExprPtr left = parsePow();
  while (isOneOf(current(), {"*", "/", "//", "%"})) {
    const Token &op = next();
    BinaryOp kind = op.text == "*"    ? BinaryOp::Mul
                    : op.text == "/"  ? BinaryOp::Div
                    : op.text == "//" ? BinaryOp::FloorDiv
                                      : BinaryOp::Mod;
    left =
        binary(Expr::Kind::Binary, op.loc, kind, std::move(left), parsePow());
  }
  return left;
}

// parse_pow: left-associative in jinja2 (2 ** 3 ** 2 is 64).
ExprPtr Parser::parsePow() {
  ExprPtr left = parseUnary();
  while (current().isOperator("**")) {
    SourceLoc loc = next().loc;
    left = binary(Expr::Kind::Binary, loc, BinaryOp::Pow, std::move(left),
                  parseUnary());
  }
  return left;
}

// parse_unary
ExprPtr Parser::parseUnary(bool withFilter) {
  DepthGuard guard(*this, exprDepth_, kMaxExpressionDepth);
  ExprPtr node;
  if (isOneOf(current(), {"-", "+"})) {
    const Token &op = next();
    auto kind = op.text == "-" ? UnaryExpr::Op::Neg : UnaryExpr::Op::Pos;
    node = std::make_unique<UnaryExpr>(op.loc, kind, parseUnary(false));
  } else {
    node = parsePrimary();
  }
  node = parsePostfix(std::move(node));
  return withFilter ? parseFilterExpr(std::move(node)) : std::move(node);
}

// parse_primary
ExprPtr Parser::parsePrimary() {
  const Token &token = current();
  SourceLoc loc = token.loc;
  switch (token.type) {
  case Token::Type::Name: {
    next();
    const std::string &name = token.text;
    if (name == "true" || name == "True" || name == "false" || name == "False")
      return std::make_unique<LiteralExpr>(
          loc, Value::boolean(name == "true" || name == "True"));
    if (name == "none" || name == "None")
      return std::make_unique<LiteralExpr>(loc, Value::none());
    return std::make_unique<NameExpr>(loc, name);
  }
  case Token::Type::String: {
    std::string text;
    while (current().type == Token::Type::String)
      text += next().text;
    return std::make_unique<LiteralExpr>(loc, Value::string(std::move(text)));
  }
  case Token::Type::Integer:
    next();
    return std::make_unique<LiteralExpr>(loc, Value::integer(token.integer));
  case Token::Type::Float:
    next();
    return std::make_unique<LiteralExpr>(loc, Value::real(token.real));
  default:
    break;
  }
  if (skipOperator("(")) {
    ExprPtr node = parseTuple(/*withCondExpr=*/true, /*explicitParens=*/true);
    expectOperator(")");
    return node;
  }
  if (token.isOperator("["))
    return parseList(loc);
  if (token.isOperator("{"))
    return parseDict(loc);
  failUnexpected();
}

// parse_list
ExprPtr Parser::parseList(SourceLoc loc) {
  expectOperator("[");
  auto list = std::make_unique<CollectionExpr>(Expr::Kind::List, loc);
  while (!current().isOperator("]")) {
    if (!list->items.empty())
      expectOperator(",");
    if (current().isOperator("]"))
      break;
    list->items.push_back(parseExpression());
  }
  expectOperator("]");
  return list;
}

// parse_dict
ExprPtr Parser::parseDict(SourceLoc loc) {
  expectOperator("{");
  auto dict = std::make_unique<CollectionExpr>(Expr::Kind::Dict, loc);
  while (!current().isOperator("}")) {
    if (!dict->items.empty())
      expectOperator(",");
    if (current().isOperator("}"))
      break;
    dict->items.push_back(parseExpression());
    expectOperator(":");
    dict->items.push_back(parseExpression());
  }
  expectOperator("}");
  return dict;
}

// parse_postfix
ExprPtr Parser::parsePostfix(ExprPtr node) {
  while (true) {
    if (isOneOf(current(), {".", "["}))
      node = parseSubscript(std::move(node));
    else if (current().isOperator("("))
      node = parseCall(std::move(node));
    else
      return node;
  }
}

// parse_filter_expr
ExprPtr Parser::parseFilterExpr(ExprPtr node) {
  while (true) {
    if (current().isOperator("|"))
      node = parseFilter(std::move(node), /*startInline=*/false);
    else if (current().isName("is"))
      node = parseTest(std::move(node));
    else if (current().isOperator("("))
      node = parseCall(std::move(node));
    else
      return node;
  }
}

// parse_subscript
ExprPtr Parser::parseSubscript(ExprPtr node) {
  const Token &open = next();
  if (open.text == ".") {
    const Token &attr = next();
    if (attr.type == Token::Type::Name)
      return std::make_unique<AttributeExpr>(open.loc, std::move(node),
                                             attr.text);
    if (attr.type != Token::Type::Integer)
      fail("expected name or number", attr);
    return std::make_unique<ItemExpr>(
        open.loc, std::move(node),
        std::make_unique<LiteralExpr>(attr.loc, Value::integer(attr.integer)));
  }
  std::vector<ExprPtr> args;
  while (!current().isOperator("]")) {
    if (!args.empty())
      expectOperator(",");
    args.push_back(parseSubscribed());
  }
  next();
  if (args.size() == 1 && args[0]->kind == Expr::Kind::Slice) {
    static_cast<SliceExpr &>(*args[0]).object = std::move(node);
    return std::move(args[0]);
  }
  ExprPtr key;
  if (args.size() == 1) {
    key = std::move(args[0]);
  } else {
    auto tuple = std::make_unique<CollectionExpr>(Expr::Kind::Tuple, open.loc);
    for (ExprPtr &arg : args) {
      if (arg->kind == Expr::Kind::Slice)
        fail("slices inside a tuple subscript are not supported", open);
      tuple->items.push_back(std::move(arg));
    }
    key = std::move(tuple);
  }
  return std::make_unique<ItemExpr>(open.loc, std::move(node), std::move(key));
}

// parse_subscribed: an expression, or start:stop:step with parts left out.
ExprPtr Parser::parseSubscribed() {
  SourceLoc loc = current().loc;
  ExprPtr start;
  if (!current().isOperator(":")) {
    start = parseExpression();
    if (!current().isOperator(":"))
      return start;
  }
  next();
  auto slice = std::make_unique<SliceExpr>(loc);
  slice->start = std::move(start);
  auto ends = [&] { return isOneOf(current(), {"]", ","}); };
  if (!current().isOperator(":") && !ends())
    slice->stop = parseExpression();
  if (skipOperator(":") && !ends())
    slice->step = parseExpression();
  return slice;
}

// parse_call
ExprPtr Parser::parseCall(ExprPtr node) {
  SourceLoc loc = node->loc;
  auto call = std::make_unique<CallExpr>(loc, std::move(node));
  call->args = parseCallArgs();
  return call;
}

// parse_call_args
Arguments Parser::parseCallArgs() {
  const Token &open = expectOperator("(");
  Arguments args;
  auto ensure = [&](bool ok) {
    if (!ok)
      fail("invalid syntax for function call expression", open);
  };
  bool requireComma = false;
  while (!current().isOperator(")")) {
    if (requireComma) {
      expectOperator(",");
      if (current().isOperator(")"))
        break;
    }
    if (skipOperator("*")) {
      ensure(!args.starArgs && !args.starKwargs);
      args.starArgs = parseExpression();
    } else if (skipOperator("**")) {
      ensure(!args.starKwargs);
      args.starKwargs = parseExpression();
    } else if (current().type == Token::Type::Name && peek().isOperator("=")) {
      ensure(!args.starKwargs);
      std::string key = next().text;
      next();
      args.keyword.emplace_back(std::move(key), parseExpression());
    } else {
      ensure(!args.starArgs && !args.starKwargs && args.keyword.empty());
      args.positional.push_back(parseExpression());
    }
    requireComma = true;
  }
  next();
  return args;
}

// parse_filter
ExprPtr Parser::parseFilter(ExprPtr node, bool startInline) {
  while (current().isOperator("|") || startInline) {
    if (!startInline)
      next();
    startInline = false;
    const Token &nameToken = current();
    std::string name = parseDottedName();
    if (!isKnownFilter(name))
      fail("unknown filter '" + name + "'", nameToken);
    auto filter = std::make_unique<FilterExpr>(
        Expr::Kind::Filter, nameToken.loc, std::move(node), std::move(name));
    if (current().isOperator("("))
      filter->args = parseCallArgs();
    node = std::move(filter);
  }
  return node;
}

// parse_test: `is [not] name`, with call arguments or one bare argument.
ExprPtr Parser::parseTest(ExprPtr node) {
  SourceLoc loc = next().loc;
  bool negated = skipName("not");
  const Token &nameToken = current();
  std::string name = parseDottedName();
  if (!isKnownTest(name))
    fail("unknown test '" + name + "'", nameToken);
  auto test = std::make_unique<FilterExpr>(Expr::Kind::Test, loc,
                                           std::move(node), std::move(name));
  const Token &token = current();
  bool bareArgument =
      (token.type == Token::Type::Name || token.type == Token::Type::String ||
       token.type == Token::Type::Integer || token.type == Token::Type::Float ||
       isOneOf(token, {"[", "{"})) &&
      !token.isName("else") && !token.isName("or") && !token.isName("and");
  if (token.isOperator("(")) {
    test->args = parseCallArgs();
  } else if (bareArgument) {
    if (token.isName("is"))
      fail("You cannot chain multiple tests with is", token);
    test->args.positional.push_back(parsePostfix(parsePrimary()));
  }
  if (negated)
    return std::make_unique<UnaryExpr>(loc, UnaryExpr::Op::Not,
                                       std::move(test));
  return test;
}

std::string Parser::parseDottedName() {
  std::string name = expectName().text;
  while (skipOperator("."))
    name += "." + expectName().text;
  return name;
}

} // namespace cohere2c::text::jinja
