//===- Parser.cpp - Statements of a chat template
//--------------------------===//
#include "text/chat_template/Parser.h"

#include "text/chat_template/Filters.h"

namespace cohere2c::text::jinja {

Parser::DepthGuard::DepthGuard(Parser &parser, unsigned &depth, unsigned limit)
    : depth_(depth) {
  if (++depth_ > limit) {
    --depth_;
    parser.fail("the template nests deeper than " + std::to_string(limit) +
                    " levels",
                parser.current());
  }
}

void Parser::fail(const std::string &message, const Token &at) const {
  throw TemplateError(message, at.loc);
}

void Parser::failUnexpected() const {
  const Token &token = current();
  switch (token.type) {
  case Token::Type::Eof:
    fail("unexpected end of template", token);
  case Token::Type::BlockEnd:
    fail("unexpected end of statement block", token);
  case Token::Type::VariableEnd:
    fail("unexpected end of print statement", token);
  case Token::Type::String:
    fail("unexpected string", token);
  case Token::Type::Integer:
  case Token::Type::Float:
    fail("unexpected number '" + token.text + "'", token);
  default:
    fail("unexpected '" + token.text + "'", token);
  }
}

bool Parser::skipOperator(std::string_view op) {
  if (!current().isOperator(op))
    return false;
  next();
  return true;
}

bool Parser::skipName(std::string_view name) {
  if (!current().isName(name))
    return false;
  next();
  return true;
}

const Token &Parser::expectOperator(std::string_view op) {
  if (!current().isOperator(op)) {
    if (current().type == Token::Type::Eof ||
        current().type == Token::Type::BlockEnd ||
        current().type == Token::Type::VariableEnd)
      fail("expected token '" + std::string(op) + "', got end of expression",
           current());
    fail("expected token '" + std::string(op) + "', got '" + current().text +
             "'",
         current());
  }
  return next();
}

const Token &Parser::expectName() {
  if (current().type != Token::Type::Name)
    fail("expected a name", current());
  return next();
}

void Parser::expectBlockEnd() {
  if (current().type != Token::Type::BlockEnd)
    failUnexpected();
  next();
}

std::unique_ptr<TemplateAst> parseTemplate(std::string_view source) {
  auto ast = std::make_unique<TemplateAst>();
  ast->body = Parser(tokenize(source)).parseTemplateBody();
  return ast;
}

Body Parser::parseTemplateBody() {
  Body body = parseStatements({}, nullptr);
  if (current().type != Token::Type::Eof)
    failUnexpected();
  return body;
}

Body Parser::parseStatements(std::initializer_list<std::string_view> ends,
                             const char *construct) {
  DepthGuard guard(*this, stmtDepth_, kMaxStatementDepth);
  if (construct) {
    skipOperator(":");
    expectBlockEnd();
  }
  Body body;
  while (true) {
    const Token &token = current();
    switch (token.type) {
    case Token::Type::Data:
      body.push_back(std::make_unique<TextStmt>(token.loc, token.text));
      next();
      break;
    case Token::Type::VariableBegin: {
      next();
      ExprPtr expr = parseTuple();
      if (current().type != Token::Type::VariableEnd)
        failUnexpected();
      next();
      body.push_back(std::make_unique<OutputStmt>(token.loc, std::move(expr)));
      break;
    }
    case Token::Type::BlockBegin:
      next();
      for (std::string_view end : ends)
        if (current().isName(end))
          return body;
      body.push_back(parseTag());
      expectBlockEnd();
      break;
    case Token::Type::Eof:
      if (construct) {
        std::string wanted;
        for (std::string_view end : ends)
          wanted += (wanted.empty() ? "'" : " or '") + std::string(end) + "'";
        fail("unexpected end of template: looking for " + wanted +
                 " to close '" + construct + "'",
             token);
      }
      return body;
    default:
      failUnexpected();
    }
  }
}

StmtPtr Parser::parseTag() {
  const Token &token = current();
  if (token.type != Token::Type::Name)
    fail("tag name expected", token);
  SourceLoc loc = token.loc;
  std::string name = token.text;
  next();
  if (name == "if")
    return parseIf(loc);
  if (name == "for")
    return parseFor(loc);
  if (name == "set")
    return parseSet(loc);
  if (name == "macro")
    return parseMacro(loc);
  if (name == "filter")
    return parseFilterBlock(loc);
  if (name == "with")
    return parseWith(loc);
  if (name == "generation")
    return parseGeneration(loc);
  if (name == "print")
    return std::make_unique<OutputStmt>(loc, parseTuple());
  if (name == "break")
    return parseLoopControl(Stmt::Kind::Break, loc);
  if (name == "continue")
    return parseLoopControl(Stmt::Kind::Continue, loc);
  throw TemplateError("unknown tag '" + name + "'", loc);
}

StmtPtr Parser::parseIf(SourceLoc loc) {
  auto stmt = std::make_unique<IfStmt>(loc);
  while (true) {
    ExprPtr test = parseTuple(/*withCondExpr=*/false);
    Body body = parseStatements({"elif", "else", "endif"}, "if");
    stmt->branches.emplace_back(std::move(test), std::move(body));
    std::string end = next().text;
    if (end == "elif")
      continue;
    if (end == "else") {
      stmt->otherwise = parseStatements({"endif"}, "if");
      next();
    }
    return stmt;
  }
}

StmtPtr Parser::parseFor(SourceLoc loc) {
  auto stmt = std::make_unique<ForStmt>(loc);
  stmt->target = parseAssignTarget(/*withNamespace=*/false, /*withTuple=*/true);
  if (stmt->target.kind == Target::Kind::Name &&
      stmt->target.names[0] == "loop")
    fail("can't assign to special loop variable in for-loop target", current());
  if (!skipName("in"))
    fail("expected 'in' in the for loop", current());
  stmt->iterable = parseTuple(/*withCondExpr=*/false);
  if (skipName("if"))
    stmt->filter = parseExpression();
  if (current().isName("recursive"))
    fail("recursive for loops are not supported", current());
  ++loopDepth_;
  stmt->body = parseStatements({"endfor", "else"}, "for");
  --loopDepth_;
  if (next().text == "else") {
    stmt->otherwise = parseStatements({"endfor"}, "for");
    next();
  }
  return stmt;
}

StmtPtr Parser::parseSet(SourceLoc loc) {
  Target target = parseAssignTarget(/*withNamespace=*/true, /*withTuple=*/true);
  if (skipOperator("=")) {
    auto stmt = std::make_unique<SetStmt>(loc);
    stmt->target = std::move(target);
    stmt->value = parseTuple();
    return stmt;
  }
  auto stmt = std::make_unique<SetBlockStmt>(loc);
  stmt->target = std::move(target);
  if (current().isOperator("|"))
    stmt->filter = parseFilter(nullptr, /*startInline=*/false);
  stmt->body = parseStatements({"endset"}, "set");
  next();
  return stmt;
}

void Parser::parseMacroSignature(MacroStmt &macro) {
  expectOperator("(");
  while (!current().isOperator(")")) {
    if (!macro.params.empty())
      expectOperator(",");
    const Token &name = expectName();
    if (skipOperator("="))
      macro.defaults.push_back(parseExpression());
    else if (!macro.defaults.empty())
      fail("non-default argument follows default argument", name);
    macro.params.push_back(name.text);
  }
  next();
}

StmtPtr Parser::parseMacro(SourceLoc loc) {
  auto stmt = std::make_unique<MacroStmt>(loc);
  stmt->name = expectName().text;
  parseMacroSignature(*stmt);
  unsigned outerLoops = loopDepth_;
  loopDepth_ = 0;
  stmt->body = parseStatements({"endmacro"}, "macro");
  loopDepth_ = outerLoops;
  next();
  stmt->catchesVarargs = mentionsName(stmt->body, "varargs");
  stmt->catchesKwargs = mentionsName(stmt->body, "kwargs");
  return stmt;
}

StmtPtr Parser::parseFilterBlock(SourceLoc loc) {
  auto stmt = std::make_unique<FilterBlockStmt>(loc);
  stmt->filter = parseFilter(nullptr, /*startInline=*/true);
  stmt->body = parseStatements({"endfilter"}, "filter");
  next();
  return stmt;
}

StmtPtr Parser::parseWith(SourceLoc loc) {
  auto stmt = std::make_unique<ScopeStmt>(loc);
  while (current().type != Token::Type::BlockEnd) {
    if (!stmt->assignments.empty())
      expectOperator(",");
    Target target = parseAssignTarget(/*withNamespace=*/false,
                                      /*withTuple=*/true);
    expectOperator("=");
    stmt->assignments.emplace_back(std::move(target), parseExpression());
  }
  stmt->body = parseStatements({"endwith"}, "with");
  next();
  return stmt;
}

StmtPtr Parser::parseGeneration(SourceLoc loc) {
  auto stmt = std::make_unique<ScopeStmt>(loc);
  stmt->body = parseStatements({"endgeneration"}, "generation");
  next();
  return stmt;
}

StmtPtr Parser::parseLoopControl(Stmt::Kind kind, SourceLoc loc) {
  if (loopDepth_ == 0)
    throw TemplateError(std::string("'") +
                            (kind == Stmt::Kind::Break ? "break" : "continue") +
                            "' outside a loop",
                        loc);
  return std::make_unique<LoopControlStmt>(kind, loc);
}

Target Parser::parseAssignTarget(bool withNamespace, bool withTuple) {
  Target target;
  target.loc = current().loc;
  if (withNamespace && current().type == Token::Type::Name &&
      peek().isOperator(".")) {
    target.kind = Target::Kind::NamespaceAttr;
    target.names.push_back(next().text);
    next();
    target.attribute = expectName().text;
    return target;
  }
  bool parenthesized = withTuple && skipOperator("(");
  bool sawComma = false;
  while (true) {
    if (current().type != Token::Type::Name || current().isName("in"))
      fail("can't assign to this target", current());
    target.names.push_back(next().text);
    if (!withTuple || !skipOperator(","))
      break;
    sawComma = true;
    if (current().type != Token::Type::Name || current().isName("in"))
      break;
  }
  if (parenthesized)
    expectOperator(")");
  if (sawComma)
    target.kind = Target::Kind::Unpack;
  for (const std::string &name : target.names)
    if (name == "true" || name == "false" || name == "none" || name == "True" ||
        name == "False" || name == "None")
      fail("can't assign to '" + name + "'", current());
  return target;
}

} // namespace cohere2c::text::jinja
