// One-token FP8 rowwise linear layers (out[j] = xs * ws[j] * sum_k x[k] w[j, k], e4m3
// operands), timed in the layouts the generator can emit, against a plain read of the same
// weight bytes (the bandwidth ceiling a GEMV can reach). Shapes: Command A's and Command R7B's
// merged qkv + gate/up, o and down projections at one token. Each variant is checked against a
// float64 host reference on sampled rows before it is timed; weights are rotated over buffers
// that together exceed the L2 so that every run reads DRAM. On a machine with an NVIDIA Hopper GPU:
//   nvcc -O3 -arch=sm_90a -std=c++17 bench/gemv_variants.cu -o gemv_variants && ./gemv_variants
//
// `./gemv_variants CUBIN KERNEL N K ROWS_PER_BLOCK` times instead a kernel the compiler
// generated (its arguments x, x_scale, w, w_scale, out; grid 1 x ceil(n / ROWS_PER_BLOCK) as the
// plan launches it: gemvBlockRows, 32 for q/k/v/gate/up, 8 for Command A's o and down; out f32
// where the name ends in "_outf32", else bf16), so that its code is compared with the variants.
//
// A variant is (rows per warp R, warps per block, slices S of k per row group, prefetch
// distance D): a lane reads 16 bytes of each of its R rows per step; the loads of step i + D
// are issued before step i's products, so (D + 1) x R x 16 bytes per lane are in flight.
#include <cuda.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

void check(cudaError_t e, const char *what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "gemv_variants: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

__device__ __forceinline__ uint4 loadStreaming(const uint4 *p) {
  uint4 v;
  asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0,%1,%2,%3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}

__device__ __forceinline__ float dot16(uint4 a, uint4 b, float acc) {
  const uint32_t wa[4] = {a.x, a.y, a.z, a.w}, wb[4] = {b.x, b.y, b.z, b.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      __half2_raw ha = __nv_cvt_fp8x2_to_halfraw2(
          (__nv_fp8x2_storage_t)(wa[i] >> (16 * h)), __NV_E4M3);
      __half2_raw hb = __nv_cvt_fp8x2_to_halfraw2(
          (__nv_fp8x2_storage_t)(wb[i] >> (16 * h)), __NV_E4M3);
      float2 fa = __half22float2(*reinterpret_cast<__half2 *>(&ha));
      float2 fb = __half22float2(*reinterpret_cast<__half2 *>(&hb));
      acc = fmaf(fa.x, fb.x, acc);
      acc = fmaf(fa.y, fb.y, acc);
    }
  }
  return acc;
}

// CHUNKS = k / 16 (16-byte chunks of a row), known at compile time as in the generator.
template <int R, int WARPS, int S, int D, int CHUNKS>
__global__ void __launch_bounds__(WARPS * 32) gemv(const uint4 *__restrict__ x, const float *xs,
                                                   const uint4 *__restrict__ w,
                                                   const float *__restrict__ ws, float *out,
                                                   int n) {
  constexpr int groups = WARPS / S, steps = (CHUNKS + 32 * S - 1) / (32 * S);
  __shared__ float partial[WARPS * R];
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32, slice = warp % S;
  int blockRow = blockIdx.x * groups * R, firstRow = blockRow + warp / S * R;
  const uint4 *rows[R];
#pragma unroll
  for (int r = 0; r < R; ++r)
    rows[r] = w + (size_t)min(firstRow + r, n - 1) * CHUNKS;
  float acc[R] = {};
  uint4 buf[D + 1][R];
  auto chunkOf = [&](int step) { return step * 32 * S + slice * 32 + lane; };
  auto issue = [&](int step) {
    int q = chunkOf(step);
    if (step * 32 * S + 32 * S > CHUNKS && q >= CHUNKS) q = 0;
#pragma unroll
    for (int r = 0; r < R; ++r) buf[step % (D + 1)][r] = loadStreaming(rows[r] + q);
  };
#pragma unroll
  for (int s = 0; s < D && s < steps; ++s) issue(s);
#pragma unroll
  for (int s = 0; s < steps; ++s) {
    if (s + D < steps) issue(s + D);
    int q = chunkOf(s);
    bool valid = !(s * 32 * S + 32 * S > CHUNKS) || q < CHUNKS;
    uint4 xv = x[valid ? q : 0];
#pragma unroll
    for (int r = 0; r < R; ++r) {
      float d = dot16(xv, buf[s % (D + 1)][r], 0.f);
      acc[r] += valid ? d : 0.f;
    }
  }
#pragma unroll
  for (int r = 0; r < R; ++r) {
    float v = acc[r];
#pragma unroll
    for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
    if (lane == 0) partial[warp * R + r] = v;
  }
  __syncthreads();
  int t = threadIdx.x, target = blockRow + t;
  if (t < groups * R && target < n) {
    int g = t / R, r = t % R;
    float v = 0;
    for (int s = 0; s < S; ++s) v += partial[(g * S + s) * R + r];
    out[target] = xs[0] * ws[target] * v;
  }
}

// The ceiling: every weight byte read once, 16 bytes a lane, 4 loads in flight.
__global__ void readAll(const uint4 *__restrict__ w, size_t chunks, float *sink) {
  uint32_t acc = 0;
  size_t stride = (size_t)gridDim.x * blockDim.x;
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  for (; i + 3 * stride < chunks; i += 4 * stride) {
    uint4 a = loadStreaming(w + i), b = loadStreaming(w + i + stride),
          c = loadStreaming(w + i + 2 * stride), d = loadStreaming(w + i + 3 * stride);
    acc ^= a.x ^ b.y ^ c.z ^ d.w;
  }
  for (; i < chunks; i += stride) acc ^= loadStreaming(w + i).x;
  if (acc == 0x12345678u) sink[0] = 1;
}

struct Shape {
  const char *name;
  int n, k;
};

struct Data {
  uint8_t *w;       // copies x n x k e4m3
  int copies;
  uint4 *x;         // k e4m3
  float *xs, *ws;   // 1, n
  float *out;
  std::vector<uint8_t> hw, hx;
  std::vector<float> hws;
  float hxs;
};

double e4m3(uint8_t v) {
  __nv_fp8_e4m3 f;
  f.__x = v;
  return (double)(float)f;
}

uint8_t randomE4m3(uint64_t &s) {
  s = s * 6364136223846793005ull + 1442695040888963407ull;
  uint8_t v = (uint8_t)(s >> 56);
  return (v & 0x7f) == 0x7f ? 0x3c : v; // no NaN
}

Data makeData(const Shape &sh, size_t l2Bytes) {
  Data d;
  size_t bytes = (size_t)sh.n * sh.k;
  d.copies = (int)std::max<size_t>(1, (4 * l2Bytes + bytes - 1) / bytes);
  d.hw.resize(bytes);
  d.hx.resize(sh.k);
  d.hws.resize(sh.n);
  uint64_t s = 42;
  for (auto &v : d.hw) v = randomE4m3(s);
  for (auto &v : d.hx) v = randomE4m3(s);
  for (auto &v : d.hws) v = 0.001f * (1 + (float)((s = s * 6364136223846793005ull + 1) >> 60));
  d.hxs = 0.5f;
  check(cudaMalloc(&d.w, bytes * d.copies), "malloc w");
  for (int c = 0; c < d.copies; ++c)
    check(cudaMemcpy(d.w + bytes * c, d.hw.data(), bytes, cudaMemcpyHostToDevice), "copy w");
  check(cudaMalloc(&d.x, sh.k), "malloc x");
  check(cudaMemcpy(d.x, d.hx.data(), sh.k, cudaMemcpyHostToDevice), "copy x");
  check(cudaMalloc(&d.xs, 4), "malloc xs");
  check(cudaMemcpy(d.xs, &d.hxs, 4, cudaMemcpyHostToDevice), "copy xs");
  check(cudaMalloc(&d.ws, 4 * sh.n), "malloc ws");
  check(cudaMemcpy(d.ws, d.hws.data(), 4 * sh.n, cudaMemcpyHostToDevice), "copy ws");
  check(cudaMalloc(&d.out, 4 * sh.n), "malloc out");
  return d;
}

void freeData(Data &d) {
  cudaFree(d.w); cudaFree(d.x); cudaFree(d.xs); cudaFree(d.ws); cudaFree(d.out);
}

// Largest relative error over sampled rows against float64; `out` f32, or bf16 where
// outBF16 (widened: its upper 16 bits).
double verify(const Shape &sh, const Data &d, bool outBF16 = false) {
  std::vector<float> out(sh.n);
  if (outBF16) {
    std::vector<uint16_t> half(sh.n);
    check(cudaMemcpy(half.data(), d.out, 2 * sh.n, cudaMemcpyDeviceToHost), "copy out");
    for (int j = 0; j < sh.n; ++j) {
      uint32_t bits = (uint32_t)half[j] << 16;
      std::memcpy(&out[j], &bits, 4);
    }
  } else {
    check(cudaMemcpy(out.data(), d.out, 4 * sh.n, cudaMemcpyDeviceToHost), "copy out");
  }
  double worst = 0;
  for (int j = 0; j < sh.n; j += 97) {
    double ref = 0, mag = 0;
    for (int k = 0; k < sh.k; ++k) {
      double p = e4m3(d.hx[k]) * e4m3(d.hw[(size_t)j * sh.k + k]);
      ref += p;
      mag += std::fabs(p);
    }
    ref *= (double)d.hxs * d.hws[j];
    mag *= (double)d.hxs * d.hws[j];
    worst = std::max(worst, std::fabs(out[j] - ref) / (mag + 1e-30));
  }
  return worst;
}

template <typename Launch>
float timeIt(const Shape &sh, const Data &d, Launch launch) {
  size_t bytes = (size_t)sh.n * sh.k;
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  for (int i = 0; i < 3; ++i) launch(d.w + bytes * (i % d.copies));
  int reps = (int)std::max<size_t>(20, (size_t)(40e9 / bytes));
  std::vector<float> ms;
  for (int trial = 0; trial < 5; ++trial) {
    cudaEventRecord(a);
    for (int i = 0; i < reps; ++i) launch(d.w + bytes * (i % d.copies));
    cudaEventRecord(b);
    check(cudaEventSynchronize(b), "run");
    float t;
    cudaEventElapsedTime(&t, a, b);
    ms.push_back(t / reps);
  }
  std::sort(ms.begin(), ms.end());
  return ms[2];
}

template <int R, int WARPS, int S, int D, int CHUNKS>
void variant(const Shape &sh, const Data &d, double ceilingUs) {
  constexpr int perBlock = WARPS / S * R;
  int blocks = (sh.n + perBlock - 1) / perBlock;
  auto launch = [&](const uint8_t *w) {
    gemv<R, WARPS, S, D, CHUNKS><<<blocks, WARPS * 32>>>(d.x, d.xs, (const uint4 *)w, d.ws,
                                                         d.out, sh.n);
  };
  check(cudaMemset(d.out, 0xff, 4 * sh.n), "poison");
  launch(d.w);
  check(cudaDeviceSynchronize(), "variant");
  double err = verify(sh, d);
  float ms = timeIt(sh, d, launch);
  cudaFuncAttributes attr;
  cudaFuncGetAttributes(&attr, gemv<R, WARPS, S, D, CHUNKS>);
  int perSm = 0;
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, gemv<R, WARPS, S, D, CHUNKS>,
                                                WARPS * 32, 0);
  double tbs = (double)sh.n * sh.k / (ms * 1e-3) / 1e12;
  std::printf("%-22s R%d W%d S%d D%d  blocks %6d  regs %3d  %d/SM  %8.2f us  %5.2f TB/s  "
              "%5.1f%% of read  err %.1e%s\n",
              sh.name, R, WARPS, S, D, blocks, attr.numRegs, perSm, ms * 1e3, tbs,
              100 * ceilingUs / (ms * 1e3), err, err > 1e-5 ? "  WRONG" : "");
}

template <int CHUNKS, int S0>
void shape(const Shape &sh, size_t l2Bytes, int sms) {
  Data d = makeData(sh, l2Bytes);
  size_t bytes = (size_t)sh.n * sh.k;
  float *dsink;
  cudaMalloc(&dsink, 4);
  auto read = [&](const uint8_t *w) { readAll<<<sms * 8, 256>>>((const uint4 *)w, bytes / 16, dsink); };
  float readMs = timeIt(sh, d, read);
  std::printf("%-22s n %d k %d: plain read %.2f us, %.2f TB/s\n", sh.name, sh.n, sh.k,
              readMs * 1e3, bytes / (readMs * 1e-3) / 1e12);
  double c = readMs * 1e3;
  variant<4, 8, S0, 0, CHUNKS>(sh, d, c); // the generator's layout before (loads at use)
  variant<4, 8, S0, 1, CHUNKS>(sh, d, c);
  variant<4, 8, S0, 2, CHUNKS>(sh, d, c);
  variant<4, 8, S0, 3, CHUNKS>(sh, d, c);
  variant<4, 8, S0, 5, CHUNKS>(sh, d, c);
  variant<2, 8, S0, 3, CHUNKS>(sh, d, c);
  variant<2, 8, S0, 7, CHUNKS>(sh, d, c);
  variant<8, 8, S0, 1, CHUNKS>(sh, d, c);
  variant<8, 8, S0, 3, CHUNKS>(sh, d, c);
  variant<4, 4, (S0 > 4 ? 4 : S0), 3, CHUNKS>(sh, d, c);
  variant<4, 16, S0, 3, CHUNKS>(sh, d, c);
  cudaFree(dsink);
  freeData(d);
}

void checkDriver(CUresult r, const char *what) {
  if (r != CUDA_SUCCESS) {
    const char *text = "";
    cuGetErrorString(r, &text);
    std::fprintf(stderr, "gemv_variants: %s: %s\n", what, text);
    std::exit(1);
  }
}

int generated(const char *cubin, const char *name, int n, int k, int rowsPerBlock) {
  cudaFree(nullptr); // the runtime's primary context, which the driver calls then use
  CUmodule module;
  CUfunction fn;
  checkDriver(cuModuleLoad(&module, cubin), "cuModuleLoad");
  checkDriver(cuModuleGetFunction(&fn, module, name), "cuModuleGetFunction");
  cudaDeviceProp prop;
  check(cudaGetDeviceProperties(&prop, 0), "device");
  Shape sh{name, n, k};
  Data d = makeData(sh, prop.l2CacheSize);
  unsigned blocks = (unsigned)((n + rowsPerBlock - 1) / rowsPerBlock);
  auto launch = [&](const uint8_t *w) {
    void *args[] = {&d.x, &d.xs, &w, &d.ws, &d.out};
    checkDriver(cuLaunchKernel(fn, 1, blocks, 1, 256, 1, 1, 0, nullptr, args, nullptr),
                "launch");
  };
  check(cudaMemset(d.out, 0xff, 4 * sh.n), "poison");
  launch(d.w);
  check(cudaDeviceSynchronize(), "generated");
  bool outBF16 = std::string(name).find("_outf32") == std::string::npos;
  double err = verify(sh, d, outBF16);
  // bf16 holds 8 significant bits: its rounding alone is up to 2^-9 of a value.
  double bound = outBF16 ? 4e-3 : 1e-5;
  float ms = timeIt(sh, d, launch);
  std::printf("%s: %.2f us, %.2f TB/s, err %.1e%s\n", name, ms * 1e3,
              (double)n * k / (ms * 1e-3) / 1e12, err, err > bound ? "  WRONG" : "");
  freeData(d);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  if (argc == 6)
    return generated(argv[1], argv[2], std::atoi(argv[3]), std::atoi(argv[4]),
                     std::atoi(argv[5]));
  if (argc != 1) {
    std::fprintf(stderr, "usage: gemv_variants [CUBIN KERNEL N K ROWS_PER_BLOCK]\n");
    return 2;
  }
  cudaDeviceProp prop;
  check(cudaGetDeviceProperties(&prop, 0), "device");
  std::printf("%s, %d SMs, L2 %d MB\n", prop.name, prop.multiProcessorCount,
              prop.l2CacheSize >> 20);
  size_t l2 = prop.l2CacheSize;
  int sms = prop.multiProcessorCount;
  // Command A: hidden 12288, intermediate 36864, 96 heads, 8 KV heads of 128.
  shape<12288 / 16, 1>({"command-a qkv+gate/up", 88064, 12288}, l2, sms);
  shape<12288 / 16, 4>({"command-a o", 12288, 12288}, l2, sms);
  shape<36864 / 16, 4>({"command-a down", 12288, 36864}, l2, sms);
  // Command R7B: hidden 4096, intermediate 14336, 32 heads, 8 KV heads of 128.
  shape<4096 / 16, 1>({"r7b qkv+gate/up", 34816, 4096}, l2, sms);
  shape<4096 / 16, 8>({"r7b o", 4096, 4096}, l2, sms);
  shape<14336 / 16, 8>({"r7b down", 4096, 14336}, l2, sms);
  return 0;
}
