//===- LaunchPlan.cpp -----------------------------------------------------===//

#include "Artifact/LaunchPlan.h"
#include "Support/EnumNames.h"
#include "Support/Json.h"

#include <nlohmann/json.hpp>

#include <map>

#include <algorithm>
#include <array>
#include <cstdint>

namespace cohere2c {

using nlohmann::json;

namespace {

const char *kArgKinds[] = {"buffer", "weight", "input", "param", "int"};

constexpr std::array<std::string_view, kNumPlanInputs> kPlanInputs = {
    "ids",         "positions",     "seqs",       "generated", "generated_rows",
    "kv_tables",   "kv_pool",       "logit_rows", "logits",    "temperatures",
    "noise_seeds", "sampled_tokens"};

/// The name an argument has in the plan's text (a KV input's group apart).
std::string argName(const PlanArg &a) {
  switch (a.kind) {
  case PlanArg::Kind::Input:
    return std::string(planInputName(a.input));
  case PlanArg::Kind::Param:
    return std::string(stepParamName(a.param));
  default:
    return a.name;
  }
}

StatusOr<DType> dtypeNamed(const std::string &name) {
  for (DType d : {DType::F32, DType::BF16, DType::F16, DType::F8E4M3})
    if (name == dtypeName(d))
      return d;
  return Status::error("unknown dtype " + name);
}

/// o[key], or null where o is not an object or has no such key (a const
/// json's operator[] must not be given a missing key).
const json &field(const json &o, const char *key) {
  static const json null;
  if (!o.is_object())
    return null;
  auto it = o.find(key);
  return it == o.end() ? null : *it;
}

} // namespace

std::string_view planInputName(PlanInput input) { return enumName(kPlanInputs, input); }

std::optional<PlanInput> planInputNamed(std::string_view name) {
  return enumNamed<PlanInput>(kPlanInputs, name);
}

namespace {

json specToJson(const KernelSpec &spec) {
  return {{"family", kernelFamilyName(spec.family)},
          {"rows", kernelRowsName(spec.rows)},
          {"rope", spec.rope},
          {"window", spec.window},
          {"out_f32", spec.outF32},
          {"addend", spec.addend},
          {"grid_sync", spec.gridSync},
          {"strides", spec.strides}};
}

/// The spec of a kernel step, or none if `j` is not a well-formed one.
std::optional<KernelSpec> specFromJson(const json &j) {
  auto at = [&](const char *key) -> const json & { return field(j, key); };
  const json &strides = at("strides");
  if (!at("family").is_string() || !at("rows").is_string() ||
      !at("rope").is_boolean() || !at("window").is_number_integer() ||
      !at("out_f32").is_boolean() || !at("addend").is_boolean() ||
      !at("grid_sync").is_boolean() || !strides.is_array() ||
      strides.size() != KernelSpec().strides.size())
    return std::nullopt;
  std::optional<KernelFamily> family = kernelFamilyNamed(at("family").get<std::string>());
  std::optional<KernelRows> rows = kernelRowsNamed(at("rows").get<std::string>());
  if (!family || !rows || at("window").get<int64_t>() < 0)
    return std::nullopt;
  KernelSpec spec{*family,
                  *rows,
                  at("rope").get<bool>(),
                  at("window").get<int64_t>(),
                  at("out_f32").get<bool>(),
                  at("addend").get<bool>(),
                  at("grid_sync").get<bool>()};
  for (size_t i = 0; i < strides.size(); ++i) {
    if (!strides[i].is_number_integer() || strides[i].get<int64_t>() < 0)
      return std::nullopt;
    spec.strides[i] = strides[i];
  }
  return spec;
}

} // namespace

std::string LaunchPlan::toJson() const {
  json j = {{"buffers", json::array()}, {"steps", json::array()},
            {"weight_fill", json::object()}};
  for (const auto &[dtype, kernel] : weightFills)
    j["weight_fill"][dtypeName(dtype)] = kernel;
  for (const PlanBuffer &b : buffers)
    j["buffers"].push_back(
        {{"name", b.name}, {"width", b.width}, {"dtype", dtypeName(b.dtype)},
         {"rows", stepParamName(b.rows)}});
  for (const PlanStep &s : steps) {
    json args = json::array();
    for (const PlanArg &a : s.args)
      args.push_back({{"kind", kArgKinds[(int)a.kind]},
                      {"name", argName(a)},
                      {"value", a.value},
                      {"group", a.group},
                      {"column", a.column},
                      {"width", a.width}});
    if (s.kind == PlanStep::Kind::Fork || s.kind == PlanStep::Kind::Join)
      j["steps"].push_back(
          {{"kind", s.kind == PlanStep::Kind::Fork ? "fork" : "join"}, {"args", args}});
    else if (s.kind == PlanStep::Kind::Kernel)
      j["steps"].push_back({{"kind", "kernel"},
                            {"side", s.side},
                            {"kernel", s.kernel},
                            {"spec", specToJson(s.spec)},
                            {"grid_x", stepParamName(s.gridX)},
                            {"grid_y", s.gridY},
                            {"block_x", s.blockX},
                            {"args", args}});
    else
      j["steps"].push_back({{"kind", "gemm"},
                            {"side", s.side},
                            {"weight", s.weight},
                            {"weight_scale", s.weightScale},
                            {"m", stepParamName(s.m)},
                            {"n", s.n},
                            {"k", s.k},
                            {"alpha", s.alpha},
                            {"plus", s.plus},
                            {"args", args}});
  }
  return j.dump();
}

StatusOr<LaunchPlan> LaunchPlan::parse(const std::string &text,
                                       const std::string &source) {
  StatusOr<json> parsed = parseJson(text, source + ": launch plan");
  if (!parsed.ok())
    return parsed.status();
  const json &j = *parsed;
  auto bad = [&](const std::string &what) {
    return Status::error(source + ": malformed launch plan: " + what);
  };
  if (!j.is_object() || !field(j, "buffers").is_array() ||
      !field(j, "steps").is_array() ||
      !(field(j, "weight_fill").is_object() || field(j, "weight_fill").is_null()))
    return bad("expected {buffers, steps[, weight_fill]}");
  // Every size the plan names must be one the runtime provides.
  auto param = [&](const json &name) { return stepParamNamed(name.get<std::string>()); };
  LaunchPlan plan;
  // Absent: no weight-fill kernels (random weights then come from the host).
  for (const auto &[name, kernel] : field(j, "weight_fill").items()) {
    StatusOr<DType> dtype = dtypeNamed(name);
    if (!dtype.ok() || !kernel.is_string())
      return bad("weight_fill entry " + excerpt(name));
    plan.weightFills[*dtype] = kernel.get<std::string>();
  }
  for (const json &b : field(j, "buffers")) {
    if (!b.is_object() || !field(b, "name").is_string() ||
        !field(b, "width").is_number_integer() ||
        !field(b, "dtype").is_string() || !field(b, "rows").is_string())
      return bad("buffer " + jsonExcerpt(b));
    StatusOr<DType> dtype = dtypeNamed(field(b, "dtype").get<std::string>());
    if (!dtype.ok())
      return bad(dtype.status().message());
    std::optional<StepParam> rows = param(field(b, "rows"));
    if (!rows)
      return bad("buffer rows " + jsonExcerpt(field(b, "rows")));
    plan.buffers.push_back({field(b, "name"), field(b, "width"), *dtype, *rows});
  }
  for (const json &s : field(j, "steps")) {
    if (!s.is_object() || !field(s, "kind").is_string() ||
        !field(s, "args").is_array())
      return bad("step " + jsonExcerpt(s));
    PlanStep step;
    for (const json &a : field(s, "args")) {
      if (!a.is_object() || !field(a, "kind").is_string() ||
          !field(a, "name").is_string() ||
          !field(a, "value").is_number_integer() ||
          !field(a, "group").is_number_integer() ||
          !field(a, "column").is_number_integer() ||
          !field(a, "width").is_number_integer() || field(a, "column") < 0 ||
          field(a, "width") < 0)
        return bad("argument " + jsonExcerpt(a));
      PlanArg arg;
      int kind = -1;
      for (int k = 0; k < 5; ++k)
        if (field(a, "kind") == kArgKinds[k])
          kind = k;
      if (kind < 0)
        return bad("argument kind " + jsonExcerpt(field(a, "kind")));
      arg.kind = (PlanArg::Kind)kind;
      arg.value = field(a, "value");
      arg.group = field(a, "group");
      arg.column = field(a, "column");
      arg.width = field(a, "width");
      std::string name = field(a, "name");
      if (arg.kind == PlanArg::Kind::Param) {
        std::optional<StepParam> p = stepParamNamed(name);
        if (!p)
          return bad("parameter " + jsonExcerpt(a));
        arg.param = *p;
      } else if (arg.kind == PlanArg::Kind::Input) {
        std::optional<PlanInput> input = planInputNamed(name);
        if (!input)
          return bad("argument names no step input: " + name);
        arg.input = *input;
      } else {
        arg.name = name;
      }
      step.args.push_back(arg);
    }
    if (field(s, "kind") == "fork" || field(s, "kind") == "join") {
      if (!step.args.empty() || s.contains("side"))
        return bad("fork or join step with arguments or a side flag " +
                   jsonExcerpt(s));
      step.kind = field(s, "kind") == "fork" ? PlanStep::Kind::Fork : PlanStep::Kind::Join;
      plan.steps.push_back(std::move(step));
      continue;
    }
    if (s.contains("side")) { // absent: the main stream
      if (!s["side"].is_boolean())
        return bad("side flag " + jsonExcerpt(s));
      step.side = s["side"];
    }
    if (field(s, "kind") == "kernel") {
      if (!field(s, "kernel").is_string() || !field(s, "grid_x").is_string() ||
          !field(s, "grid_y").is_number_integer() ||
          !field(s, "block_x").is_number_integer())
        return bad("kernel step " + jsonExcerpt(s));
      step.kernel = field(s, "kernel");
      std::optional<KernelSpec> spec = specFromJson(field(s, "spec"));
      if (!spec)
        return bad("kernel spec of " + step.kernel);
      step.spec = *spec;
      std::optional<StepParam> gridX = param(field(s, "grid_x"));
      if (!gridX)
        return bad("grid_x " + jsonExcerpt(field(s, "grid_x")));
      step.gridX = *gridX;
      step.gridY = field(s, "grid_y");
      step.blockX = field(s, "block_x");
    } else if (field(s, "kind") == "gemm") {
      if (!field(s, "weight").is_string() ||
          !field(s, "weight_scale").is_string() || !field(s, "m").is_string() ||
          !field(s, "n").is_number_integer() ||
          !field(s, "k").is_number_integer() ||
          !field(s, "alpha").is_number() || !field(s, "plus").is_boolean())
        return bad("gemm step " + jsonExcerpt(s));
      step.kind = PlanStep::Kind::Gemm;
      step.weight = field(s, "weight");
      step.weightScale = field(s, "weight_scale");
      step.plus = field(s, "plus");
      if (step.args.size() !=
          (step.weightScale.empty() ? 2u : 3u) + (step.plus ? 1u : 0u))
        return bad("gemm step arguments " + jsonExcerpt(s));
      std::optional<StepParam> m = param(field(s, "m"));
      if (!m)
        return bad("m " + jsonExcerpt(field(s, "m")));
      step.m = *m;
      step.n = field(s, "n");
      step.k = field(s, "k");
      step.alpha = field(s, "alpha");
    } else {
      return bad("step kind " + jsonExcerpt(field(s, "kind")));
    }
    plan.steps.push_back(std::move(step));
  }
  return plan;
}

Status LaunchPlan::check(const WeightLayout &weights, int64_t kvGroups,
                         const std::string &source) const {
  auto bad = [&](const std::string &what) {
    return Status::error(source + ": launch plan: " + what);
  };
  std::map<std::string, const PlanBuffer *> named;
  for (const PlanBuffer &b : buffers) {
    if (b.width <= 0)
      return bad("buffer " + b.name + " has width " + std::to_string(b.width));
    if (!named.emplace(b.name, &b).second)
      return bad("buffer " + b.name + " is declared twice");
  }
  auto checkArg = [&](const PlanArg &a) -> Status {
    bool kv = a.kind == PlanArg::Kind::Input && isKVInput(a.input);
    if (kv ? a.group < 0 || a.group >= kvGroups : a.group != 0)
      return bad("argument " + argName(a) + " names KV group " +
                 std::to_string(a.group) +
                 (kv ? " of " + std::to_string(kvGroups) : " (it has none)"));
    switch (a.kind) {
    case PlanArg::Kind::Buffer: {
      auto it = named.find(a.name);
      if (it == named.end())
        return bad("argument names no buffer: " + a.name);
      if (a.column > it->second->width || a.width > it->second->width - a.column)
        return bad("view [" + std::to_string(a.column) + ", " +
                   std::to_string(a.column + a.width) + ") of buffer " + a.name + " of width " +
                   std::to_string(it->second->width));
      return Status::success();
    }
    case PlanArg::Kind::Weight: {
      const WeightEntry *w = weights.find(a.name);
      if (!w)
        return bad("argument names no weight: " + a.name);
      if (a.width > 0 && (a.width > INT64_MAX / 8 ||
                          w->offset + (uint64_t)a.width * dtypeSize(w->dtype) > weights.totalBytes))
        return bad("a kernel reads " + std::to_string(a.width) + " elements from weight " +
                   a.name + ", past the weights (" + std::to_string(weights.totalBytes) +
                   " bytes)");
      return Status::success();
    }
    default:
      return Status::success();
    }
  };
  // Forks and joins alternate, starting with a fork and ending with a join;
  // side steps lie between the two. Between them no buffer column and no
  // step input is named by both streams (used[stream]: buffer -> the column
  // ranges its steps name, the width 0 of a whole buffer as its width).
  bool forked = false;
  std::array<std::map<std::string, std::vector<std::pair<int64_t, int64_t>>>, 2> used;
  auto stepName = [](const PlanStep &s) { return s.kernel.empty() ? s.weight : s.kernel; };
  for (const PlanStep &s : steps) {
    if (s.kind == PlanStep::Kind::Fork || s.kind == PlanStep::Kind::Join) {
      bool fork = s.kind == PlanStep::Kind::Fork;
      if (forked == fork)
        return bad(fork ? "a fork before the join of the previous one" : "a join without a fork");
      forked = fork;
      used = {};
      continue;
    }
    if (s.side && !forked)
      return bad("a side-stream step (" + stepName(s) + ") outside a fork and its join");
    for (const PlanArg &a : s.args) {
      if (!forked || (a.kind != PlanArg::Kind::Buffer && a.kind != PlanArg::Kind::Input))
        continue;
      std::string name = argName(a);
      if (a.kind == PlanArg::Kind::Input && isKVInput(a.input))
        name += " of KV group " + std::to_string(a.group);
      auto it = named.find(name);
      int64_t lo = a.column,
              hi = a.width ? a.column + a.width : (it == named.end() ? 1 : it->second->width);
      for (auto [begin, end] : used[!s.side][name])
        if (lo < end && begin < hi)
          return bad("between a fork and its join, both streams use " + name + " (" +
                     stepName(s) + " on the " + (s.side ? "side" : "main") + " stream)");
      used[s.side][name].push_back({lo, hi});
    }
    for (const PlanArg &a : s.args)
      if (Status status = checkArg(a); !status.ok())
        return status;
    if (s.kind == PlanStep::Kind::Kernel) {
      if (s.kernel.empty() || s.gridY < 1 || s.gridY > 65535 || s.blockX < 1 ||
          s.blockX > 1024)
        return bad("kernel " + s.kernel + " launched with grid_y " + std::to_string(s.gridY) +
                   " and block_x " + std::to_string(s.blockX));
      // A grid-synchronized kernel's blocks are its grid_y (the runtime
      // checks they fit the device at once): its grid_x is at most 1.
      if (s.spec.gridSync && s.gridX != StepParam::GemvToken)
        return bad("kernel " + s.kernel +
                   " synchronizes its grid but is launched over " +
                   std::string(stepParamName(s.gridX)) +
                   " (only gemv_token, at most 1)");
      // The rows a kernel was compiled to stride through are those of the
      // buffers it is given.
      std::vector<int> rows = rowStrideArguments(s.spec);
      for (size_t i = 0; i < rows.size(); ++i) {
        const PlanArg *a = rows[i] < (int)s.args.size() ? &s.args[rows[i]] : nullptr;
        auto it = a && a->kind == PlanArg::Kind::Buffer ? named.find(a->name) : named.end();
        if (it == named.end() || it->second->width != s.spec.strides[i])
          return bad("kernel " + s.kernel + ": argument " + std::to_string(rows[i]) +
                     " must be a buffer of row width " + std::to_string(s.spec.strides[i]) +
                     ", the stride it was compiled for");
      }
      continue;
    }
    // Operands: a [m, k] and c [m, n], whole buffers of those widths whose
    // rows are m's (a buffer of every token's rows holds any m: each m is at
    // most the step's tokens), or the logits input for c; FP8: a's per-token
    // scales, a buffer of one value per row.
    auto operand = [&](const PlanArg &a, int64_t width, const char *what) -> Status {
      auto it = named.find(a.name);
      bool ok = a.kind == PlanArg::Kind::Buffer && it != named.end() && a.column == 0 &&
                (a.width == 0 || a.width == it->second->width) &&
                it->second->width == width &&
                (it->second->rows == StepParam::Tokens || it->second->rows == s.m);
      return ok ? Status::success()
                : bad("the GEMM of " + s.weight + ": its " + what +
                      " must be a whole buffer of " + std::to_string(width) +
                      " values per row and " + std::string(stepParamName(s.m)) +
                      " rows, given " + argName(a));
    };
    if (Status status = operand(s.args[0], s.k, "input a"); !status.ok())
      return status;
    if (!(s.args[1].kind == PlanArg::Kind::Input && s.args[1].input == PlanInput::Logits))
      if (Status status = operand(s.args[1], s.n, "output c"); !status.ok())
        return status;
    if (!s.weightScale.empty())
      if (Status status = operand(s.args[2], 1, "input scales"); !status.ok())
        return status;
    if (s.plus) {
      const PlanArg &addend = s.args.back();
      if (Status status = operand(addend, s.n, "addend"); !status.ok())
        return status;
      if (s.args[1].kind != PlanArg::Kind::Buffer ||
          named.at(addend.name)->dtype != named.at(s.args[1].name)->dtype)
        return bad("the GEMM of " + s.weight + ": its addend " +
                   argName(addend) + " must be of the dtype of its output c");
    }
    // A merged GEMM's weight spans the entries after the one it names.
    const WeightEntry *w = weights.find(s.weight);
    const WeightEntry *scales = s.weightScale.empty() ? nullptr : weights.find(s.weightScale);
    if (!w || (!s.weightScale.empty() && !scales))
      return bad("GEMM names no weight: " + (w ? s.weightScale : s.weight));
    if (s.n <= 0 || s.k <= 0 || s.n > INT32_MAX || s.k > INT32_MAX ||
        w->offset + (uint64_t)s.n * s.k * dtypeSize(w->dtype) > weights.totalBytes ||
        (scales && scales->offset + (uint64_t)s.n * 4 > weights.totalBytes))
      return bad("the GEMM of " + s.weight + " (" + std::to_string(s.n) + " x " +
                 std::to_string(s.k) + ") reaches past the weights (" +
                 std::to_string(weights.totalBytes) + " bytes)");
  }
  if (forked)
    return bad("a fork without a join");
  return Status::success();
}

} // namespace cohere2c
