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

PlanInterpreter::PlanInterpreter(const Manifest &manifest, const WeightBuffer &weights,
                                 int64_t numBlocks, int64_t blockSize)
    : manifest_(manifest), weights_(weights), blockSize_(blockSize),
      limits_(StepLimits::of(manifest, blockSize, {numBlocks, numBlocks})) {
  activations_ = Precision::forTarget(manifest.precision, manifest.target)->activations;
  for (int g = 0; g < kNumKVGroups; ++g)
    pools_[g].assign(numBlocks * bytesPerBlock()[g], 0);
}

std::array<int64_t, kNumKVGroups> PlanInterpreter::bytesPerBlock() const {
  return {kvBytesPerBlock(manifest_, kFullGroup, blockSize_),
          kvBytesPerBlock(manifest_, kSlidingGroup, blockSize_)};
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
    auto pool = [&](KVGroupIndex g) {
      return Ref{pools_[g].data(), activations_, 0,
                 (int64_t)(pools_[g].size() / dtypeSize(activations_)), name, &error_};
    };
    switch (a.input) {
    case PlanInput::FullPool:
      return pool(kFullGroup);
    case PlanInput::SlidingPool:
      return pool(kSlidingGroup);
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
    case PlanInput::FullTables:
      return ints(input_->tables[kFullGroup]);
    case PlanInput::SlidingTables:
      return ints(input_->tables[kSlidingGroup]);
    case PlanInput::LogitRows:
      return ints(input_->logitRows);
    case PlanInput::GreedyTokens:
      return ints(greedyTokens_);
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
  const std::string &k = step.kernel;
  const KernelSpec &spec = step.spec;
  using F = KernelFamily;
  expectStrides(step);
  const ModelConfig &c = manifest_.config;
  auto i32 = [](const Ref &r, int64_t i) { return r.getInt(i); };
  auto widthOf = [&](const PlanArg &a) {
    if (a.width)
      return a.width;
    for (const PlanBuffer &b : manifest_.launchPlan.buffers)
      if (b.name == a.name)
        return b.width;
    return int64_t(0);
  };
  auto layerNorm = [&](const Ref &in, const Ref &w, int64_t t, int64_t h) {
    double mean = 0, var = 0;
    for (int64_t d = 0; d < h; ++d)
      mean += in.get(t * h + d);
    mean /= h;
    for (int64_t d = 0; d < h; ++d)
      var += (in.get(t * h + d) - mean) * (in.get(t * h + d) - mean);
    float rstd = 1.0f / std::sqrt((float)(var / h) + (float)c.layerNormEps);
    std::vector<float> out(h);
    for (int64_t d = 0; d < h; ++d)
      out[d] = (in.get(t * h + d) - (float)mean) * rstd * w.get(d);
    return out;
  };
  auto roundTo = [](float v, DType t) {
    if (t != DType::BF16)
      return v;
    uint16_t bits = floatToBF16(v);
    return elementToFloat(DType::BF16, &bits);
  };
  auto storeQuantized = [&](const std::vector<float> &row, int64_t t, const PlanArg &pairs,
                            const PlanArg &scales) {
    int64_t w = row.size();
    Ref bytes = arg(pairs), scale = arg(scales);
    if (!bytes.inBounds(t * w) || !bytes.inBounds(t * w + w - 1) || !scale.inBounds(t))
      return;
    quantizeRow(row, reinterpret_cast<uint8_t *>(bytes.data) + t * w,
                reinterpret_cast<float *>(scale.data) + t);
  };
  const auto &a = step.args;
  for (int64_t t = 0; t < gridX; ++t) {
    if (spec.family == F::Embedding) {
      Ref ids = arg(a[0]), table = arg(a[1]), out = arg(a[2]);
      int64_t h = widthOf(a[2]);
      for (int64_t d = 0; d < h; ++d)
        out.set(t * h + d, table.get(i32(ids, t) * h + d));
    } else if (spec.family == F::LayerNormQuantFP8) {
      Ref w = arg(a[1]);
      // Quantized from the f32 row, as the recipe (no bf16 rounding first).
      storeQuantized(layerNorm(arg(a[0]), w, t, widthOf(a[0])), t, a[2], a[3]);
    } else if (spec.family == F::LayerNorm) {
      Ref out = arg(a[2]);
      int64_t h = widthOf(a[2]);
      std::vector<float> row = layerNorm(arg(a[0]), arg(a[1]), t, h);
      for (int64_t d = 0; d < h; ++d)
        out.set(t * h + d, row[d]);
    } else if (spec.family == F::AttentionMerge) {
      // out = sum_z acc_z e^(m_z - m) / sum_z l_z e^(m_z - m), m = max_z m_z.
      // Block row t: token generated_rows[t] for the "_generated" kernels;
      // "_prompt": token t, skipped if generated, its splits an argument.
      Ref partial = arg(a[0]), out = arg(a[1]);
      bool prompt = spec.rows == KernelRows::Prompt;
      // Arguments: partial, out, splits[, generated_rows | generated].
      int64_t token = spec.rows == KernelRows::Generated ? i32(arg(a[3]), t) : t;
      if (prompt && i32(arg(a[3]), t) != 0)
        continue;
      int64_t heads = c.numHeads, hd = c.headDim;
      int64_t splits = scalar(a[2]);
      for (int64_t h = 0; h < heads; ++h) {
        int64_t base = (t * heads + h) * splits * (hd + 2);
        double m = -std::numeric_limits<double>::infinity();
        for (int64_t z = 0; z < splits; ++z)
          m = std::max(m, (double)partial.get(base + z * (hd + 2)));
        double l = 0;
        std::vector<double> acc(hd, 0.0);
        for (int64_t z = 0; z < splits; ++z) {
          double w = std::exp(partial.get(base + z * (hd + 2)) - m);
          l += w * partial.get(base + z * (hd + 2) + 1);
          for (int64_t d = 0; d < hd; ++d)
            acc[d] += w * partial.get(base + z * (hd + 2) + 2 + d);
        }
        for (int64_t d = 0; d < hd; ++d)
          out.set(token * heads * hd + h * hd + d, (float)(acc[d] / l));
      }
    } else if (spec.family == F::KVAppend || spec.family == F::Attention ||
               spec.family == F::AttentionPrefill) {
      bool append = spec.family == F::KVAppend;
      bool prefill = spec.family == F::AttentionPrefill;
      // RoPE (append) and the window (attention) of a sliding layer.
      bool sliding = append ? spec.rope : spec.window > 0;
      // kv_append: k, v, positions, seqs, tables, pool, slot, bs, width[, q,
      //   q_rotated] (rope: q rotated into q_rotated, which attention reads)
      // attention: q, positions, seqs, tables, pool, out, slot, bs, width,
      //   splits, partial[, generated_rows] (one split: out, else partial)
      // attention_prefill: q, positions, seqs, tables, pool, out, slot, bs,
      //   width, tokens, splits, partial, generated (a block per tile of
      //   tokens and split of its keys)
      size_t base = append ? 2 : 1;
      Ref positions = arg(a[base]), seqs = arg(a[base + 1]), tables = arg(a[base + 2]),
          pool = arg(a[base + 3]);
      int64_t slot = scalar(a[6]), bs = scalar(a[7]), tw = scalar(a[8]);
      KVGroupIndex g = a[base + 3].input == PlanInput::FullPool ? kFullGroup : kSlidingGroup;
      int64_t layers = manifest_.kvGroups[g].layers.size();
      int64_t kvh = c.numKVHeads, hd = c.headDim, heads = c.numHeads;
      // Block t: (tile, split) for the prefill kernel, (row, split) for
      // the split kernel (its splits: argument 9).
      int64_t splits = append ? 1 : scalar(a[prefill ? 10 : 9]), split = t % splits;
      int64_t row = t / splits;
      int64_t firstToken = prefill ? row * kPrefillTileTokens : row;
      int64_t endToken =
          prefill ? std::min(firstToken + kPrefillTileTokens, scalar(a[9])) : row + 1;
      // The "_generated" kernels' block row is token generated_rows[row];
      // the prefill kernel skips generated tokens.
      bool generatedOnly = spec.rows == KernelRows::Generated;
      if (generatedOnly)
        firstToken = i32(arg(a.back()), row), endToken = firstToken + 1;
      for (int64_t token = firstToken; token < endToken; ++token) {
        if (prefill && i32(arg(a.back()), token) != 0)
          continue;
        int64_t p = i32(positions, token), s = i32(seqs, token);
        auto at = [&](int64_t j, int kv, int64_t head) {
          int64_t block = i32(tables, s * tw + j / bs);
          return ((((block * layers + slot) * 2 + kv) * bs + j % bs) * kvh + head) * hd;
        };
        auto rotate = [&](std::vector<float> &x) { // interleaved pairs at position p
          for (int64_t m = 0; m < hd / 2; ++m) {
            double angle = p * std::pow(c.ropeTheta, -2.0 * m / hd);
            float cs = (float)std::cos(angle), sn = (float)std::sin(angle);
            float x0 = x[2 * m], x1 = x[2 * m + 1];
            x[2 * m] = x0 * cs - x1 * sn;
            x[2 * m + 1] = x1 * cs + x0 * sn;
          }
        };
        if (append) {
          Ref kk = arg(a[0]), vv = arg(a[1]);
          for (int64_t h = 0; h < kvh; ++h) {
            std::vector<float> key(hd);
            for (int64_t d = 0; d < hd; ++d) {
              key[d] = kk.get(token * kk.stride + h * hd + d);
              pool.set(at(p, 1, h) + d, vv.get(token * vv.stride + h * hd + d));
            }
            if (sliding)
              rotate(key);
            for (int64_t d = 0; d < hd; ++d)
              pool.set(at(p, 0, h) + d, key[d]);
          }
          if (!sliding)
            continue;
          Ref q = arg(a[9]), rotated = arg(a[10]);
          for (int64_t h = 0; h < heads; ++h) {
            std::vector<float> query(hd);
            for (int64_t d = 0; d < hd; ++d)
              query[d] = q.get(token * q.stride + h * hd + d);
            rotate(query);
            for (int64_t d = 0; d < hd; ++d)
              rotated.set(token * heads * hd + h * hd + d, query[d]);
          }
          continue;
        }
        // The prefill kernel's keys for `split` of the run (tokens of one
        // sequence in a row) holding `token` within its tile: the run's key
        // tiles [lo / tile * tile, max p + 1), lo = min p - W + 1 (sliding)
        // or 0, shared out contiguously, whole tiles per split, at least
        // kMinPrefillSplitKeyTiles per split.
        auto prefillSplitKeys = [&](int64_t token, int64_t split) {
          int64_t tileStart = t / splits * kPrefillTileTokens;
          int64_t tileEnd = std::min(tileStart + kPrefillTileTokens, scalar(a[9]));
          int64_t runStart = tileStart;
          for (int64_t i = tileStart; i < tileEnd; ++i)
            if (i > runStart && i32(seqs, i) != i32(seqs, i - 1)) {
              if (i > token)
                break;
              runStart = i;
            }
          int64_t minP = i32(positions, runStart), maxP = minP;
          for (int64_t i = runStart; i < tileEnd && i32(seqs, i) == i32(seqs, runStart); ++i)
            minP = std::min<int64_t>(minP, i32(positions, i)),
            maxP = std::max<int64_t>(maxP, i32(positions, i));
          int64_t lo = sliding ? std::max<int64_t>(0, minP - spec.window + 1) : 0;
          int64_t hi = maxP + 1, firstTile = lo / kPrefillKeyTile * kPrefillKeyTile;
          int64_t runTiles = (hi - firstTile + kPrefillKeyTile - 1) / kPrefillKeyTile;
          int64_t share =
              std::max((runTiles + splits - 1) / splits, kMinPrefillSplitKeyTiles) *
              kPrefillKeyTile;
          int64_t from = std::min(firstTile + split * share, hi);
          return std::pair<int64_t, int64_t>{from, std::min(from + share, hi)};
        };
        // q . k_j for KV head kv.
        auto dotKey = [&](const std::vector<float> &query, int64_t kv, int64_t j) {
          double dot = 0;
          for (int64_t d = 0; d < hd; ++d)
            dot += query[d] * (double)pool.get(at(j, 0, kv) + d);
          return dot;
        };
        // Over keys [lo, hi) of head h: the max score m, the sum l of
        // e^(score - m) and acc = sum e^(score - m) v.
        auto attend = [&](const std::vector<float> &query, int64_t kv, int64_t lo, int64_t hi,
                          double &mx, double &sum, std::vector<double> &acc) {
          std::vector<double> scores;
          mx = -std::numeric_limits<double>::infinity();
          for (int64_t j = lo; j < hi; ++j) {
            scores.push_back(dotKey(query, kv, j) / std::sqrt((double)hd));
            mx = std::max(mx, scores.back());
          }
          sum = 0;
          acc.assign(hd, 0.0);
          for (int64_t j = lo; j < hi; ++j) {
            double e = std::exp(scores[j - lo] - mx);
            sum += e;
            for (int64_t d = 0; d < hd; ++d)
              acc[d] += e * pool.get(at(j, 1, kv) + d);
          }
        };
        // The tensor-core kernel's arithmetic: q rounded to bf16,
        // keys in tiles of kPrefillKeyTile from a multiple of it, each
        // tile's weights e^(score - running max) rounded to bf16 before
        // they multiply V.
        auto attendTiled = [&](std::vector<float> query, int64_t kv, int64_t lo, int64_t hi,
                               double &mx, double &sum, std::vector<double> &acc) {
          for (float &x : query)
            x = roundTo(x, DType::BF16);
          mx = -std::numeric_limits<double>::infinity();
          sum = 0;
          acc.assign(hd, 0.0);
          if (lo >= hi) // no key (a split's keys can all lie outside [first, p])
            return;
          for (int64_t tile = lo / kPrefillKeyTile * kPrefillKeyTile; tile < hi;
               tile += kPrefillKeyTile) {
            int64_t from = std::max(tile, lo), to = std::min(tile + kPrefillKeyTile, hi);
            std::vector<float> scores;
            double m = mx;
            for (int64_t j = from; j < to; ++j) {
              scores.push_back((float)dotKey(query, kv, j) / std::sqrt((float)hd));
              m = std::max(m, (double)scores.back());
            }
            double alpha = std::exp(mx - m);
            sum *= alpha;
            for (double &x : acc)
              x *= alpha;
            for (int64_t j = from; j < to; ++j) {
              float e = std::exp(scores[j - from] - m);
              sum += e;
              for (int64_t d = 0; d < hd; ++d)
                acc[d] += roundTo(e, DType::BF16) * pool.get(at(j, 1, kv) + d);
            }
            mx = m;
          }
        };
        Ref q = arg(a[0]);
        int64_t first = sliding ? std::max<int64_t>(0, p - spec.window + 1) : 0;
        for (int64_t h = 0; h < heads; ++h) {
          int64_t kv = h / (heads / kvh);
          std::vector<float> query(hd);
          for (int64_t d = 0; d < hd; ++d)
            query[d] = q.get(token * q.stride + h * hd + d);
          double mx, sum;
          std::vector<double> acc;
          if (prefill) { // the split's keys, with the kernel's roundings
            auto [lo, hi] = prefillSplitKeys(token, split);
            attendTiled(query, kv, std::max(first, lo), std::min(p + 1, hi), mx, sum, acc);
          } else { // this block's split of the keys [first, p]
            int64_t share = (p + 1 - first + splits - 1) / splits;
            int64_t lo = std::min(first + split * share, p + 1), hi = std::min(lo + share, p + 1);
            attend(query, kv, lo, hi, mx, sum, acc);
          }
          // One split stores the output, several their partial results (the
          // prefill kernel's by token, the split kernel's by block row).
          if (splits == 1) {
            Ref out = arg(a[5]);
            for (int64_t d = 0; d < hd; ++d)
              out.set(token * heads * hd + h * hd + d, (float)(acc[d] / sum));
            continue;
          }
          Ref partial = arg(a[prefill ? 11 : 10]);
          int64_t at = (((prefill ? token : row) * heads + h) * splits + split) * (hd + 2);
          partial.set(at, (float)mx);
          partial.set(at + 1, (float)sum);
          for (int64_t d = 0; d < hd; ++d)
            partial.set(at + 2 + d, (float)acc[d]);
        }
      }
    } else if (spec.family == F::Gemv || spec.family == F::GemvFP8) {
      // A linear layer of one token: out[0, j] = sum_k x[0, k] w[j, k]
      // (FP8: x_scale[0] w_scale[j] times that).
      bool fp8 = spec.family == F::GemvFP8;
      Ref x = arg(a[0]), w = arg(a[fp8 ? 2 : 1]), out = arg(a.back());
      DType stored = spec.outF32 ? DType::F32 : DType::BF16;
      if (out.dtype != stored && error_.empty())
        error_ = k + ": stores " + dtypeName(stored) + " into a buffer of " +
                 dtypeName(out.dtype);
      int64_t n = widthOf(a.back()), kk = widthOf(a[0]);
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (int64_t i = 0; i < kk; ++i)
          sum += (double)x.get(t * kk + i) * w.get(j * kk + i);
        if (fp8)
          sum *= (double)arg(a[1]).get(t) * arg(a[3]).get(j);
        out.set(t * n + j, (float)sum);
      }
    } else if (spec.family == F::GreedyTokens) {
      // Row t's greedy token: the engine's own greedyToken.
      Ref logits = arg(a[0]), tokens = arg(a[1]);
      std::vector<float> row(c.vocabSize);
      for (int64_t d = 0; d < c.vocabSize; ++d)
        row[d] = logits.get(t * c.vocabSize + d);
      tokens.setInt(t, greedyToken(row.data(), c.vocabSize));
    } else if (spec.family == F::QuantizeFP8) {
      Ref in = arg(a[0]);
      int64_t w = widthOf(a[0]);
      std::vector<float> row(w);
      for (int64_t d = 0; d < w; ++d)
        row[d] = in.get(t * w + d);
      storeQuantized(row, t, a[1], a[2]);
    } else if (spec.family == F::SwiGLU || spec.family == F::SwiGLUQuantFP8) {
      Ref g = arg(a[0]), u = arg(a[1]);
      int64_t w = widthOf(a[0]);
      std::vector<float> row(w);
      for (int64_t d = 0; d < w; ++d) {
        float x = g.get(t * g.stride + d);
        row[d] = x / (1.0f + std::exp(-x)) * u.get(t * u.stride + d);
      }
      if (spec.family == F::SwiGLUQuantFP8) {
        storeQuantized(row, t, a[2], a[3]); // from the f32 product
      } else {
        Ref out = arg(a[2]);
        for (int64_t d = 0; d < w; ++d)
          out.set(t * w + d, row[d]);
      }
    } else if (spec.family == F::ResidualSum) {
      int64_t w = widthOf(a.back());
      Ref out = arg(a.back());
      for (int64_t d = 0; d < w; ++d) {
        float sum = 0;
        for (size_t i = 0; i + 1 < a.size(); ++i)
          sum += arg(a[i]).get(t * w + d);
        out.set(t * w + d, sum);
      }
    } else if (spec.family == F::GatherRows) {
      Ref in = arg(a[0]), rows = arg(a[1]), out = arg(a[2]);
      int64_t w = widthOf(a[2]);
      for (int64_t d = 0; d < w; ++d)
        out.set(t * w + d, in.get(i32(rows, t) * w + d));
    }
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
      out.set(t * step.n + n, (float)(step.alpha * sum));
    }
}

Status PlanInterpreter::run(const StepInput &in, StepOutput &output) {
  input_ = &in;
  int64_t tokens = in.ids.size(), rows = in.logitRows.size();
  if (Status s = in.check(limits_); !s.ok())
    return s;
  generatedRows_ = in.generatedRows();
  params_ = stepParams(tokens, generatedRows_.size(), rows, blockSize_,
                       in.tableWidth[kFullGroup], in.tableWidth[kSlidingGroup], in.maxKeys(false),
                       in.maxKeys(true), in.greedyOnly);
  mostPrefillSplits_ = std::max(mostPrefillSplits_, params_[StepParam::PrefillSplits]);
  if (params_[StepParam::DecodeTokens])
    mostDecodeSplits_ = std::max(mostDecodeSplits_, params_[StepParam::DecodeSplits]);
  logits_.assign(rows * manifest_.config.vocabSize, 0.0f);
  greedyTokens_.assign(rows, -2); // not a token: rows the plan left unset fail
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
  // As the cuda executor: greedy tokens from the plan's kernel, or logits.
  if (in.greedyOnly)
    output.greedyTokens = greedyTokens_;
  else
    output.logits = logits_;
  return Status::success();
}

} // namespace cohere2c::test
