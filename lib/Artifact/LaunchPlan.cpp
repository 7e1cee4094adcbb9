//===- LaunchPlan.cpp -----------------------------------------------------===//

#include "Artifact/LaunchPlan.h"

#include <nlohmann/json.hpp>

namespace cohere2c {

using nlohmann::json;

namespace {

const char *kArgKinds[] = {"buffer", "weight", "input", "param", "int"};

StatusOr<DType> dtypeNamed(const std::string &name) {
  for (DType d : {DType::F32, DType::BF16, DType::F16, DType::F8E4M3})
    if (name == dtypeName(d))
      return d;
  return Status::error("unknown dtype " + name);
}

} // namespace

std::string LaunchPlan::toJson() const {
  json j = {{"buffers", json::array()}, {"steps", json::array()}};
  for (const PlanBuffer &b : buffers)
    j["buffers"].push_back(
        {{"name", b.name}, {"width", b.width}, {"dtype", dtypeName(b.dtype)}});
  for (const PlanStep &s : steps) {
    json args = json::array();
    for (const PlanArg &a : s.args)
      args.push_back({{"kind", kArgKinds[(int)a.kind]},
                      {"name", a.name},
                      {"value", a.value},
                      {"column", a.column},
                      {"width", a.width}});
    if (s.kind == PlanStep::Kind::Kernel)
      j["steps"].push_back({{"kind", "kernel"},
                            {"kernel", s.kernel},
                            {"grid_x", s.gridXParam},
                            {"grid_y", s.gridY},
                            {"block_x", s.blockX},
                            {"args", args}});
    else
      j["steps"].push_back({{"kind", "gemm"},
                            {"weight", s.weight},
                            {"weight_scale", s.weightScale},
                            {"m", s.mParam},
                            {"n", s.n},
                            {"k", s.k},
                            {"alpha", s.alpha},
                            {"args", args}});
  }
  return j.dump();
}

StatusOr<LaunchPlan> LaunchPlan::parse(const std::string &text,
                                       const std::string &source) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  auto bad = [&](const std::string &what) {
    return Status::error(source + ": malformed launch plan: " + what);
  };
  if (j.is_discarded() || !j.is_object() || !j["buffers"].is_array() ||
      !j["steps"].is_array())
    return bad("expected {buffers, steps}");
  LaunchPlan plan;
  for (const json &b : j["buffers"]) {
    if (!b.is_object() || !b["name"].is_string() || !b["width"].is_number_integer() ||
        !b["dtype"].is_string())
      return bad("buffer " + b.dump());
    StatusOr<DType> dtype = dtypeNamed(b["dtype"].get<std::string>());
    if (!dtype.ok())
      return bad(dtype.status().message());
    plan.buffers.push_back({b["name"], b["width"], *dtype});
  }
  for (const json &s : j["steps"]) {
    if (!s.is_object() || !s["kind"].is_string() || !s["args"].is_array())
      return bad("step " + s.dump());
    PlanStep step;
    for (const json &a : s["args"]) {
      if (!a.is_object() || !a["kind"].is_string() || !a["name"].is_string() ||
          !a["value"].is_number_integer() || !a["column"].is_number_integer() ||
          !a["width"].is_number_integer() || a["column"] < 0 || a["width"] < 0)
        return bad("argument " + a.dump());
      PlanArg arg;
      int kind = -1;
      for (int k = 0; k < 5; ++k)
        if (a["kind"] == kArgKinds[k])
          kind = k;
      if (kind < 0)
        return bad("argument kind " + a["kind"].dump());
      arg.kind = (PlanArg::Kind)kind;
      arg.name = a["name"];
      arg.value = a["value"];
      arg.column = a["column"];
      arg.width = a["width"];
      step.args.push_back(arg);
    }
    if (s["kind"] == "kernel") {
      if (!s["kernel"].is_string() || !s["grid_x"].is_string() ||
          !s["grid_y"].is_number_integer() || !s["block_x"].is_number_integer())
        return bad("kernel step " + s.dump());
      step.kernel = s["kernel"];
      step.gridXParam = s["grid_x"];
      step.gridY = s["grid_y"];
      step.blockX = s["block_x"];
    } else if (s["kind"] == "gemm") {
      if (!s["weight"].is_string() || !s["weight_scale"].is_string() ||
          !s["m"].is_string() || !s["n"].is_number_integer() ||
          !s["k"].is_number_integer() || !s["alpha"].is_number())
        return bad("gemm step " + s.dump());
      step.kind = PlanStep::Kind::Gemm;
      step.weight = s["weight"];
      step.weightScale = s["weight_scale"];
      if (step.args.size() != (step.weightScale.empty() ? 2u : 3u))
        return bad("gemm step arguments " + s.dump());
      step.mParam = s["m"];
      step.n = s["n"];
      step.k = s["k"];
      step.alpha = s["alpha"];
    } else {
      return bad("step kind " + s["kind"].dump());
    }
    plan.steps.push_back(std::move(step));
  }
  return plan;
}

} // namespace cohere2c
