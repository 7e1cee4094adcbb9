//===- PlanInterpreterAttention.cpp - Attention kernels, on the CPU -------===//
//
// The KV append (with RoPE), split and prefill attention and the merge of
// splits, as PlanInterpreter runs them: a block row at a time, with the
// arguments of KernelSpec.h's families and the roundings of the kernels.
//
//===----------------------------------------------------------------------===//

#include "PlanInterpreter.h"

#include "Artifact/WeightPacking.h"

#include <cmath>
#include <limits>

namespace cohere2c::test {

namespace {

float roundToBF16(float v) {
  uint16_t bits = floatToBF16(v);
  return elementToFloat(DType::BF16, &bits);
}

/// Rotates x (head_dim values, pairs (x[2m], x[2m+1]) interleaved) to
/// position p: angle p theta^(-2m / head_dim) (RoPE, Su et al. 2021).
void rotate(std::vector<float> &x, int64_t p, double theta) {
  int64_t hd = x.size();
  for (int64_t m = 0; m < hd / 2; ++m) {
    double angle = p * std::pow(theta, -2.0 * m / hd);
    float cs = (float)std::cos(angle), sn = (float)std::sin(angle);
    float x0 = x[2 * m], x1 = x[2 * m + 1];
    x[2 * m] = x0 * cs - x1 * sn;
    x[2 * m + 1] = x1 * cs + x0 * sn;
  }
}

} // namespace

/// A KV group's paged pool as the kernels address it: [blocks][layers of
/// the group][K, V][block size][KV heads][head_dim]; key j of sequence s in
/// block tables[s][j / block size].
struct PlanInterpreter::PagedPool {
  Ref pool, tables;
  int64_t layers, slot, blockSize, tableWidth, kvHeads, headDim;

  int64_t at(int64_t seq, int64_t j, int kv, int64_t head) const {
    int64_t block = tables.getInt(seq * tableWidth + j / blockSize);
    return ((((block * layers + slot) * 2 + kv) * blockSize + j % blockSize) * kvHeads + head) *
           headDim;
  }
  /// What a block of attention keeps over its keys: the largest score, the
  /// sum of e^(score - largest) and acc = sum e^(score - largest) v_j.
  struct Softmax {
    double max = -std::numeric_limits<double>::infinity(), sum = 0;
    std::vector<double> acc;
  };

  /// q . k_j for KV head kv, in double.
  double dot(const std::vector<float> &q, int64_t seq, int64_t j, int64_t kv) const {
    double sum = 0;
    for (int64_t d = 0; d < headDim; ++d)
      sum += q[d] * (double)pool.get(at(seq, j, 0, kv) + d);
    return sum;
  }
  /// Over keys [lo, hi) of KV head kv, scores q . k_j / sqrt(head_dim).
  Softmax attend(const std::vector<float> &q, int64_t seq, int64_t kv, int64_t lo,
                 int64_t hi) const {
    Softmax s{.acc = std::vector<double>(headDim, 0.0)};
    std::vector<double> scores;
    for (int64_t j = lo; j < hi; ++j) {
      scores.push_back(dot(q, seq, j, kv) / std::sqrt((double)headDim));
      s.max = std::max(s.max, scores.back());
    }
    for (int64_t j = lo; j < hi; ++j) {
      double e = std::exp(scores[j - lo] - s.max);
      s.sum += e;
      for (int64_t d = 0; d < headDim; ++d)
        s.acc[d] += e * pool.get(at(seq, j, 1, kv) + d);
    }
    return s;
  }
  /// attend with the tensor-core kernel's arithmetic: q rounded to bf16,
  /// keys in tiles of kPrefillKeyTile from a multiple of it, f32 scores,
  /// each tile's weights e^(score - running max) rounded to bf16 before
  /// they multiply V. No key (a split's keys can all lie outside the
  /// token's): the empty state.
  Softmax attendTiled(std::vector<float> q, int64_t seq, int64_t kv, int64_t lo,
                      int64_t hi) const {
    for (float &x : q)
      x = roundToBF16(x);
    Softmax s{.acc = std::vector<double>(headDim, 0.0)};
    if (lo >= hi)
      return s;
    for (int64_t tile = lo / kPrefillKeyTile * kPrefillKeyTile; tile < hi;
         tile += kPrefillKeyTile) {
      int64_t from = std::max(tile, lo), to = std::min(tile + kPrefillKeyTile, hi);
      std::vector<float> scores;
      double m = s.max;
      for (int64_t j = from; j < to; ++j) {
        scores.push_back((float)dot(q, seq, j, kv) / std::sqrt((float)headDim));
        m = std::max(m, (double)scores.back());
      }
      double alpha = std::exp(s.max - m);
      s.sum *= alpha;
      for (double &x : s.acc)
        x *= alpha;
      for (int64_t j = from; j < to; ++j) {
        float e = std::exp(scores[j - from] - m);
        s.sum += e;
        for (int64_t d = 0; d < headDim; ++d)
          s.acc[d] += roundToBF16(e) * pool.get(at(seq, j, 1, kv) + d);
      }
      s.max = m;
    }
    return s;
  }
};

PlanInterpreter::PagedPool PlanInterpreter::poolOf(const PlanStep &step, size_t tables) {
  const auto &a = step.args;
  return {arg(a[tables + 1]),
          arg(a[tables]),
          (int64_t)manifest_.kvGroups[a[tables + 1].group].layers.size(),
          scalar(a[6]),
          scalar(a[7]),
          scalar(a[8]),
          manifest_.config.numKVHeads,
          manifest_.config.headDim};
}

// k, v, positions, seqs, tables, pool, slot, bs, width[, q, q_rotated]: token
// t's k (rotated with rope) and v into the pool; with rope q rotated into
// q_rotated, which attention reads.
void PlanInterpreter::kvAppend(const PlanStep &step, int64_t t) {
  const auto &a = step.args;
  const ModelConfig &c = manifest_.config;
  PagedPool pool = poolOf(step, 4);
  int64_t p = arg(a[2]).getInt(t), s = arg(a[3]).getInt(t), hd = c.headDim;
  Ref k = arg(a[0]), v = arg(a[1]);
  for (int64_t h = 0; h < c.numKVHeads; ++h) {
    std::vector<float> key(hd);
    for (int64_t d = 0; d < hd; ++d) {
      key[d] = k.get(t * k.stride + h * hd + d);
      pool.pool.set(pool.at(s, p, 1, h) + d, v.get(t * v.stride + h * hd + d));
    }
    if (step.spec.rope)
      rotate(key, p, c.ropeTheta);
    for (int64_t d = 0; d < hd; ++d)
      pool.pool.set(pool.at(s, p, 0, h) + d, key[d]);
  }
  if (!step.spec.rope)
    return;
  Ref q = arg(a[9]), rotated = arg(a[10]);
  for (int64_t h = 0; h < c.numHeads; ++h) {
    std::vector<float> query(hd);
    for (int64_t d = 0; d < hd; ++d)
      query[d] = q.get(t * q.stride + h * hd + d);
    rotate(query, p, c.ropeTheta);
    for (int64_t d = 0; d < hd; ++d)
      rotated.set((t * c.numHeads + h) * hd + d, query[d]);
  }
}

// attention: q, positions, seqs, tables, pool, out, slot, bs, width, splits,
//   partial[, generated_rows] (block t: row t / splits, split t % splits)
// attention_prefill: q, positions, seqs, tables, pool, out, slot, bs, width,
//   tokens, splits, partial, generated (block t: tile of tokens t / splits,
//   split t % splits; generated tokens skipped)
void PlanInterpreter::attention(const PlanStep &step, int64_t t) {
  const auto &a = step.args;
  bool prefill = step.spec.family == KernelFamily::AttentionPrefill;
  int64_t splits = scalar(a[prefill ? 10 : 9]), row = t / splits;
  int64_t first = prefill ? row * kPrefillTileTokens : row;
  int64_t end = prefill ? std::min(first + kPrefillTileTokens, scalar(a[9])) : row + 1;
  // The "_generated" kernels' block row is token generated_rows[row].
  if (step.spec.rows == KernelRows::Generated)
    first = arg(a.back()).getInt(row), end = first + 1;
  for (int64_t token = first; token < end; ++token)
    if (!prefill || arg(a.back()).getInt(token) == 0)
      attendToken(step, token, row, t % splits, splits);
}

void PlanInterpreter::attendToken(const PlanStep &step, int64_t token, int64_t row,
                                  int64_t split, int64_t splits) {
  const auto &a = step.args;
  const ModelConfig &c = manifest_.config;
  bool prefill = step.spec.family == KernelFamily::AttentionPrefill;
  int64_t window = step.spec.window, hd = c.headDim, heads = c.numHeads;
  PagedPool pool = poolOf(step, 3);
  int64_t p = arg(a[1]).getInt(token), s = arg(a[2]).getInt(token);
  int64_t first = window > 0 ? std::max<int64_t>(0, p - window + 1) : 0;
  // The block's keys: the prefill kernel's split of its run's key tiles, or
  // the split kernel's share of [first, p].
  int64_t lo, hi;
  if (prefill) {
    auto [from, to] = prefillSplitKeys(step, token, row * kPrefillTileTokens, split, splits);
    lo = std::max(first, from), hi = std::min(p + 1, to);
  } else {
    int64_t share = (p + 1 - first + splits - 1) / splits;
    lo = std::min(first + split * share, p + 1), hi = std::min(lo + share, p + 1);
  }
  Ref q = arg(a[0]);
  for (int64_t h = 0; h < heads; ++h) {
    int64_t kv = h / (heads / c.numKVHeads);
    std::vector<float> query(hd);
    for (int64_t d = 0; d < hd; ++d)
      query[d] = q.get(token * q.stride + h * hd + d);
    PagedPool::Softmax sm =
        prefill ? pool.attendTiled(query, s, kv, lo, hi) : pool.attend(query, s, kv, lo, hi);
    // One split stores the output, several their partial results (the
    // prefill kernel's by token, the split kernel's by block row).
    if (splits == 1) {
      Ref out = arg(a[5]);
      for (int64_t d = 0; d < hd; ++d)
        out.set((token * heads + h) * hd + d, (float)(sm.acc[d] / sm.sum));
      continue;
    }
    Ref partial = arg(a[prefill ? 11 : 10]);
    int64_t at = (((prefill ? token : row) * heads + h) * splits + split) * (hd + 2);
    partial.set(at, (float)sm.max);
    partial.set(at + 1, (float)sm.sum);
    for (int64_t d = 0; d < hd; ++d)
      partial.set(at + 2 + d, (float)sm.acc[d]);
  }
}

// The prefill kernel's keys for `split` of the run (tokens of one sequence
// in a row) holding `token` within its tile: the run's key tiles
// [lo / tile * tile, max p + 1), lo = min p - W + 1 (sliding) or 0, shared
// out contiguously, whole tiles per split, at least kMinPrefillSplitKeyTiles
// per split.
std::pair<int64_t, int64_t> PlanInterpreter::prefillSplitKeys(const PlanStep &step,
                                                              int64_t token, int64_t tileStart,
                                                              int64_t split, int64_t splits) {
  const auto &a = step.args;
  Ref positions = arg(a[1]), seqs = arg(a[2]);
  int64_t tileEnd = std::min(tileStart + kPrefillTileTokens, scalar(a[9]));
  int64_t runStart = tileStart;
  for (int64_t i = tileStart; i < tileEnd; ++i)
    if (i > runStart && seqs.getInt(i) != seqs.getInt(i - 1)) {
      if (i > token)
        break;
      runStart = i;
    }
  int64_t minP = positions.getInt(runStart), maxP = minP;
  for (int64_t i = runStart; i < tileEnd && seqs.getInt(i) == seqs.getInt(runStart); ++i)
    minP = std::min<int64_t>(minP, positions.getInt(i)),
    maxP = std::max<int64_t>(maxP, positions.getInt(i));
  int64_t window = step.spec.window;
  int64_t lo = window > 0 ? std::max<int64_t>(0, minP - window + 1) : 0;
  int64_t hi = maxP + 1, firstTile = lo / kPrefillKeyTile * kPrefillKeyTile;
  int64_t runTiles = (hi - firstTile + kPrefillKeyTile - 1) / kPrefillKeyTile;
  int64_t share =
      std::max((runTiles + splits - 1) / splits, kMinPrefillSplitKeyTiles) * kPrefillKeyTile;
  int64_t from = std::min(firstTile + split * share, hi);
  return {from, std::min(from + share, hi)};
}

// out = sum_z acc_z e^(m_z - m) / sum_z l_z e^(m_z - m), m = max_z m_z.
// partial, out, splits[, generated_rows | generated]: block row t is token
// generated_rows[t] for the "_generated" kernels; "_prompt": token t,
// skipped if generated.
void PlanInterpreter::attentionMerge(const PlanStep &step, int64_t t) {
  const auto &a = step.args;
  const KernelSpec &spec = step.spec;
  Ref partial = arg(a[0]), out = arg(a[1]);
  int64_t token = spec.rows == KernelRows::Generated ? arg(a[3]).getInt(t) : t;
  if (spec.rows == KernelRows::Prompt && arg(a[3]).getInt(t) != 0)
    return;
  int64_t heads = manifest_.config.numHeads, hd = manifest_.config.headDim;
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
      out.set((token * heads + h) * hd + d, (float)(acc[d] / l));
  }
}

} // namespace cohere2c::test
