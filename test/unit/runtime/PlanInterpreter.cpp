//===- PlanInterpreter.cpp ------------------------------------------------===//

#include "PlanInterpreter.h"

#include "Artifact/WeightPacking.h"
#include "scheduler/Sampler.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace cohere2c::test {

void PlanInterpreter::expectStrides(const PlanStep &step) {
  std::vector<int> rows = rowStrideArguments(step.spec);
  for (size_t i = 0; i < rows.size() && error_.empty(); ++i) {
    int64_t given = arg(step.args[rows[i]]).stride;
    if (given != step.spec.strides[i])
      error_ = step.kernel + ": argument " + std::to_string(rows[i]) +
               " compiled for a row stride of " + std::to_string(step.spec.strides[i]) +
               ", given a buffer of " + std::to_string(given);
  }
}

bool PlanInterpreter::Ref::inBounds(int64_t i) const {
  if (i >= 0 && i < size)
    return true;
  if (error && error->empty())
    *error = name + ": element " + std::to_string(i) + " accessed, " + std::to_string(size) +
             " exist";
  return false;
}

float PlanInterpreter::Ref::get(int64_t i) const {
  if (!inBounds(i))
    return std::numeric_limits<float>::quiet_NaN();
  return elementToFloat(dtype, data + i * dtypeSize(dtype));
}

int32_t PlanInterpreter::Ref::getInt(int64_t i) const {
  return inBounds(i) ? reinterpret_cast<const int32_t *>(data)[i] : 0;
}

void PlanInterpreter::Ref::setInt(int64_t i, int32_t v) const {
  if (inBounds(i))
    reinterpret_cast<int32_t *>(data)[i] = v;
}

void PlanInterpreter::Ref::set(int64_t i, float v) const {
  if (!inBounds(i))
    return;
  char *p = data + i * dtypeSize(dtype);
  switch (dtype) {
  case DType::F32:
    std::memcpy(p, &v, 4);
    break;
  case DType::BF16: {
    uint16_t bits = floatToBF16(v);
    std::memcpy(p, &bits, 2);
    break;
  }
  default:
    *reinterpret_cast<uint8_t *>(p) = floatToE4M3(v);
  }
}

PlanInterpreter::PlanInterpreter(const Manifest &manifest,
                                 const WeightBuffer &weights, int64_t numBlocks,
                                 int64_t blockSize)
    : manifest_(manifest), weights_(weights), blockSize_(blockSize),
      limits_(StepLimits::of(manifest, blockSize, numBlocks)) {
  activations_ = Precision::forTarget(manifest.precision, manifest.target)->activations;
  pool_.assign(numBlocks * bytesPerBlock(), 0);
}

int64_t PlanInterpreter::bytesPerBlock() const {
  return kvBytesPerBlock(manifest_, blockSize_);
}

PlanInterpreter::Ref PlanInterpreter::arg(const PlanArg &a) {
  switch (a.kind) {
  case PlanArg::Kind::Buffer:
    for (const PlanBuffer &b : manifest_.launchPlan.buffers)
      if (b.name == a.name) { // a column range of the buffer's rows
        std::vector<char> &bytes = buffers_[a.name];
        int64_t elements = bytes.size() / dtypeSize(b.dtype);
        return {bytes.data() + a.column * dtypeSize(b.dtype), b.dtype, b.width,
                elements - a.column, a.name, &error_};
      }
    break;
  case PlanArg::Kind::Weight: {
    // The entry, or with a width the span of the entries laid out from it.
    const WeightEntry *w = manifest_.weights.find(a.name);
    int64_t elements = a.width ? a.width : w->numBytes / dtypeSize(w->dtype);
    if ((int64_t)(w->offset + elements * dtypeSize(w->dtype)) > (int64_t)weights_.size())
      elements = 0;
    return {const_cast<char *>(static_cast<const char *>(weights_.data())) + w->offset,
            w->dtype, 0, elements, a.name, &error_};
  }
  case PlanArg::Kind::Input: {
    std::string name(planInputName(a.input));
    auto ints = [&](const std::vector<int32_t> &v) {
      return Ref{reinterpret_cast<char *>(const_cast<int32_t *>(v.data())), DType::F32, 0,
                 (int64_t)v.size(), name, &error_};
    };
    switch (a.input) {
    case PlanInput::KVPool:
      return {pool_.data(),
              activations_,
              0,
              (int64_t)(pool_.size() / dtypeSize(activations_)),
              name,
              &error_};
    case PlanInput::Logits:
      return {reinterpret_cast<char *>(logits_.data()), DType::F32, 0, (int64_t)logits_.size(),
              name, &error_};
    case PlanInput::Ids:
      return ints(input_->ids);
    case PlanInput::Positions:
      return ints(input_->positions);
    case PlanInput::Seqs:
      return ints(input_->seqRows);
    case PlanInput::Generated:
      return ints(input_->generated);
    case PlanInput::GeneratedRows:
      return ints(generatedRows_);
    case PlanInput::KVTables:
      return ints(input_->tables[a.group]);
    case PlanInput::LogitRows:
      return ints(input_->logitRows);
    case PlanInput::SampledTokens:
      return ints(sampledTokens_);
    case PlanInput::Temperatures:
      return {reinterpret_cast<char *>(
                  const_cast<float *>(input_->temperatures.data())),
              DType::F32,
              0,
              (int64_t)input_->temperatures.size(),
              name,
              &error_};
    case PlanInput::NoiseSeeds: // read as u64 by sampledTokens
      return {reinterpret_cast<char *>(
                  const_cast<uint64_t *>(input_->noiseSeeds.data())),
              DType::F32,
              0,
              2 * (int64_t)input_->noiseSeeds.size(),
              name,
              &error_};
    }
    break;
  }
  default:
    break;
  }
  return {};
}

int64_t PlanInterpreter::scalar(const PlanArg &a) const {
  return a.kind == PlanArg::Kind::Param ? params_[a.param] : a.value;
}

void PlanInterpreter::quantizeRow(const std::vector<float> &row, uint8_t *bytes,
                                  float *scale) {
  double amax = 0;
  for (float v : row)
    amax = std::max(amax, (double)std::fabs(v));
  double s = std::max(amax / 448.0, 1.0 / (448.0 * 512.0));
  for (size_t i = 0; i < row.size(); ++i)
    bytes[i] = floatToE4M3((float)(row[i] / s));
  *scale = (float)s;
}

void PlanInterpreter::kernel(const PlanStep &step, int64_t gridX) {
  using F = KernelFamily;
  expectStrides(step);
  for (int64_t t = 0; t < gridX && error_.empty(); ++t) {
    switch (step.spec.family) {
    case F::Embedding:
      embedding(step, t);
      break;
    case F::LayerNorm:
    case F::LayerNormQuantFP8:
      layerNorm(step, t);
      break;
    case F::QuantizeFP8:
      quantize(step, t);
      break;
    case F::SwiGLU:
    case F::SwiGLUQuantFP8:
      swiglu(step, t);
      break;
    case F::ResidualSum:
      residualSum(step, t);
      break;
    case F::GatherRows:
      gatherRows(step, t);
      break;
    case F::SampleTokens:
      sampledTokens(step, t);
      break;
    case F::Gemv:
    case F::GemvFP8:
      gemv(step, t);
      break;
    case F::KVAppend:
      kvAppend(step, t);
      break;
    case F::Attention:
    case F::AttentionPrefill:
      attention(step, t);
      break;
    case F::AttentionMerge:
      attentionMerge(step, t);
      break;
    case F::RandomUniform:
    case F::RandomUniformFP8: // the weight fills run at load, not in a step
      error_ = step.kernel + ": not a kernel of a step";
      break;
    }
  }
}

int64_t PlanInterpreter::widthOf(const PlanArg &a) const {
  if (a.width)
    return a.width;
  for (const PlanBuffer &b : manifest_.launchPlan.buffers)
    if (b.name == a.name)
      return b.width;
  return 0;
}

std::vector<float> PlanInterpreter::normalizedRow(const Ref &in, const Ref &w, int64_t t,
                                                  int64_t h) const {
  double mean = 0, var = 0;
  for (int64_t d = 0; d < h; ++d)
    mean += in.get(t * h + d);
  mean /= h;
  for (int64_t d = 0; d < h; ++d)
    var += (in.get(t * h + d) - mean) * (in.get(t * h + d) - mean);
  float rstd = 1.0f / std::sqrt((float)(var / h) + (float)manifest_.config.layerNormEps);
  std::vector<float> out(h);
  for (int64_t d = 0; d < h; ++d)
    out[d] = (in.get(t * h + d) - (float)mean) * rstd * w.get(d);
  return out;
}

void PlanInterpreter::storeQuantized(const std::vector<float> &row, int64_t t,
                                     const PlanArg &pairs, const PlanArg &scales) {
  int64_t w = row.size();
  Ref bytes = arg(pairs), scale = arg(scales);
  if (!bytes.inBounds(t * w) || !bytes.inBounds(t * w + w - 1) || !scale.inBounds(t))
    return;
  quantizeRow(row, reinterpret_cast<uint8_t *>(bytes.data) + t * w,
              reinterpret_cast<float *>(scale.data) + t);
}

void PlanInterpreter::storeRow(const PlanStep &step, int64_t t, const std::vector<float> &row,
                               bool quantized) {
  const auto &a = step.args;
  if (quantized) {
    storeQuantized(row, t, a[2], a[3]);
    return;
  }
  Ref out = arg(a[2]);
  int64_t w = row.size();
  for (int64_t d = 0; d < w; ++d)
    out.set(t * w + d, row[d]);
}

void PlanInterpreter::embedding(const PlanStep &step, int64_t t) {
  const auto &a = step.args;
  Ref ids = arg(a[0]), table = arg(a[1]), out = arg(a[2]);
  int64_t h = widthOf(a[2]);
  for (int64_t d = 0; d < h; ++d)
    out.set(t * h + d, table.get(ids.getInt(t) * h + d));
}

void PlanInterpreter::layerNorm(const PlanStep &step, int64_t t) {
  const auto &a = step.args;
  std::vector<float> row = normalizedRow(arg(a[0]), arg(a[1]), t, widthOf(a[0]));
  storeRow(step, t, row, step.spec.family == KernelFamily::LayerNormQuantFP8);
}

void PlanInterpreter::quantize(const PlanStep &step, int64_t t) {
  const auto &a = step.args;
  Ref in = arg(a[0]);
  int64_t w = widthOf(a[0]);
  std::vector<float> row(w);
  for (int64_t d = 0; d < w; ++d)
    row[d] = in.get(t * w + d);
  storeQuantized(row, t, a[1], a[2]);
}

void PlanInterpreter::swiglu(const PlanStep &step, int64_t t) {
  const auto &a = step.args;
  Ref g = arg(a[0]), u = arg(a[1]);
  int64_t w = widthOf(a[0]);
  std::vector<float> row(w);
  for (int64_t d = 0; d < w; ++d) {
    float x = g.get(t * g.stride + d);
    row[d] = x / (1.0f + std::exp(-x)) * u.get(t * u.stride + d);
  }
  storeRow(step, t, row, step.spec.family == KernelFamily::SwiGLUQuantFP8);
}

void PlanInterpreter::residualSum(const PlanStep &step, int64_t t) {
  const auto &a = step.args;
  int64_t w = widthOf(a.back());
  Ref out = arg(a.back());
  for (int64_t d = 0; d < w; ++d) {
    float sum = 0;
    for (size_t i = 0; i + 1 < a.size(); ++i)
      sum += arg(a[i]).get(t * w + d);
    out.set(t * w + d, sum);
  }
}

void PlanInterpreter::gatherRows(const PlanStep &step, int64_t t) {
  const auto &a = step.args;
  Ref in = arg(a[0]), rows = arg(a[1]), out = arg(a[2]);
  int64_t w = widthOf(a[2]);
  for (int64_t d = 0; d < w; ++d)
    out.set(t * w + d, in.get(rows.getInt(t) * w + d));
}

void PlanInterpreter::sampledTokens(const PlanStep &step, int64_t t) {
  // Row t's token: the engine's own gumbelMaxToken at the row's temperature
  // and noise seed (a u64: two elements of the seeds' Ref).
  int64_t vocab = manifest_.config.vocabSize;
  Ref logits = arg(step.args[0]), temperatures = arg(step.args[1]),
      seeds = arg(step.args[2]), tokens = arg(step.args[3]);
  std::vector<float> row(vocab);
  for (int64_t d = 0; d < vocab; ++d)
    row[d] = logits.get(t * vocab + d);
  if (!seeds.inBounds(2 * t + 1)) {
    error_ =
        step.kernel + ": no noise seed for logits row " + std::to_string(t);
    return;
  }
  uint64_t seed;
  std::memcpy(&seed, seeds.data + 8 * t, 8);
  tokens.setInt(t,
                gumbelMaxToken(row.data(), vocab, temperatures.get(t), seed));
}

void PlanInterpreter::gemv(const PlanStep &step, int64_t t) {
  // A linear layer of one token: out[0, j] = sum_k x[0, k] w[j, k]
  // (FP8: x_scale[0] w_scale[j] times that), plus addend[0, j] with one.
  const auto &a = step.args;
  bool fp8 = step.spec.family == KernelFamily::GemvFP8;
  Ref x = arg(a[0]), w = arg(a[fp8 ? 2 : 1]), out = arg(a.back());
  DType stored = step.spec.outF32 ? DType::F32 : DType::BF16;
  if (out.dtype != stored) {
    error_ = step.kernel + ": stores " + dtypeName(stored) + " into a buffer of " +
             dtypeName(out.dtype);
    return;
  }
  int64_t n = widthOf(a.back()), k = widthOf(a[0]);
  for (int64_t j = 0; j < n; ++j) {
    double sum = 0;
    for (int64_t i = 0; i < k; ++i)
      sum += (double)x.get(t * k + i) * w.get(j * k + i);
    if (fp8)
      sum *= (double)arg(a[1]).get(t) * arg(a[3]).get(j);
    if (step.spec.addend)
      sum += arg(a[a.size() - 2]).get(t * n + j);
    out.set(t * n + j, (float)sum);
  }
}

void PlanInterpreter::gemm(const PlanStep &step, int64_t m) {
  Ref a = arg(step.args[0]), out = arg(step.args[1]);
  Ref w = arg(PlanArg::weight(step.weight, step.n * step.k));
  bool fp8 = !step.weightScale.empty();
  Ref ws = fp8 ? arg(PlanArg::weight(step.weightScale, step.n)) : Ref{};
  Ref xs = fp8 ? arg(step.args[2]) : Ref{};
  for (int64_t t = 0; t < m; ++t)
    for (int64_t n = 0; n < step.n; ++n) {
      double sum = 0;
      for (int64_t k = 0; k < step.k; ++k)
        sum += (double)a.get(t * step.k + k) * w.get(n * step.k + k);
      if (fp8)
        sum *= (double)xs.get(t) * ws.get(n);
      sum *= step.alpha;
      if (step.plus)
        sum += arg(step.args.back()).get(t * step.n + n);
      out.set(t * step.n + n, (float)sum);
    }
}

Status PlanInterpreter::run(const StepInput &in, StepOutput &output) {
  input_ = &in;
  int64_t tokens = in.ids.size(), rows = in.logitRows.size();
  if (Status s = in.check(limits_); !s.ok())
    return s;
  generatedRows_ = in.generatedRows();
  params_ =
      stepParams(tokens, generatedRows_.size(), rows, blockSize_, in.tableWidth,
                 in.maxKeys(false), in.maxKeys(true), in.tokensOnly);
  mostPrefillSplits_ = std::max(mostPrefillSplits_, params_[StepParam::PrefillSplits]);
  if (params_[StepParam::DecodeTokens])
    mostDecodeSplits_ = std::max(mostDecodeSplits_, params_[StepParam::DecodeSplits]);
  logits_.assign(rows * manifest_.config.vocabSize, 0.0f);
  sampledTokens_.assign(rows, -2); // not a token: rows the plan left unset fail
  for (const PlanBuffer &b : manifest_.launchPlan.buffers) {
    // Exactly this step's size: a rows parameter too small for what the
    // kernels touch is an out-of-bounds error, not a read of an earlier
    // step's rows.
    buffers_[b.name].resize(params_[b.rows] * b.width * dtypeSize(b.dtype));
  }
  const std::vector<PlanStep> &steps = manifest_.launchPlan.steps;
  auto execute = [&](const PlanStep &step) {
    if (step.kind == PlanStep::Kind::Gemm)
      gemm(step, params_[step.m]);
    else
      kernel(step, params_[step.gridX]);
  };
  bool sideStream = params_[StepParam::SideStream];
  for (size_t i = 0; i < steps.size() && error_.empty(); ++i) {
    bool fork = steps[i].kind == PlanStep::Kind::Fork, join = steps[i].kind == PlanStep::Kind::Join;
    if (!fork || !sideStream) { // without the side stream: plan order
      if (!fork && !join)
        execute(steps[i]);
      continue;
    }
    // The region up to the join (LaunchPlan::check pairs them): one
    // stream's steps, then the other's.
    size_t end = i + 1;
    while (end < steps.size() && steps[end].kind != PlanStep::Kind::Join)
      ++end;
    for (bool side : {sideStreamFirst_, !sideStreamFirst_})
      for (size_t j = i + 1; j < end && error_.empty(); ++j)
        if (steps[j].side == side)
          execute(steps[j]);
    i = end;
  }
  if (!error_.empty())
    return Status::error(error_);
  // As the cuda executor: sampled tokens from the plan's kernel, or logits.
  if (in.tokensOnly)
    output.sampledTokens = sampledTokens_;
  else
    output.logits = logits_;
  return Status::success();
}

} // namespace cohere2c::test
