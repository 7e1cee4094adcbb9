//===- CudaExecutor.cpp ---------------------------------------------------===//

#include "cuda/CudaExecutor.h"
#include "cuda/Check.h"

#include <algorithm>
#include <cstring>

namespace cohere2c {

namespace {

constexpr int64_t kTableWidthStep = 16;      // block-table width granularity
constexpr int64_t kMaxGraphs = 64;           // decode graphs kept at most

cudaDataType_t cudaType(DType d) {
  return d == DType::BF16  ? CUDA_R_16BF
         : d == DType::F16 ? CUDA_R_16F
                           : CUDA_R_32F;
}
} // namespace

StatusOr<std::unique_ptr<CudaExecutor>>
CudaExecutor::create(const LoadedArtifact &artifact, const WeightSource &weights,
                     EngineOptions &options) {
  const Manifest &m = artifact.manifest();
  if (m.target != "cuda")
    return Status::error(artifact.path() + ": compiled for the " + m.target +
                         " target, not cuda");
  StatusOr<std::unique_ptr<CudaApi>> api = CudaApi::load();
  if (!api.ok())
    return Status::error(artifact.path() + " is a cuda artifact, but " +
                         api.status().message());
  std::unique_ptr<CudaExecutor> e(new CudaExecutor());
  e->api_ = std::move(*api);
  e->manifest_ = &m;
  StatusOr<Precision> precision = Precision::forTarget(m.precision, m.target);
  if (!precision.ok())
    return precision.status();
  e->dtype_ = precision->activations;
  const CudaApi &cu = *e->api_;
  auto *api_ = &cu; // for COHERE2C_CHECK
  CUdevice device;
  COHERE2C_CHECK(cu.cuDeviceGet(&device, 0));
  char name[256] = {0};
  COHERE2C_CHECK(cu.cuDeviceGetName(name, sizeof(name), device));
  e->deviceName_ = name;
  COHERE2C_CHECK(cu.cuDevicePrimaryCtxRetain(&e->context_, device));
  COHERE2C_CHECK(cu.cuCtxSetCurrent(e->context_));
  COHERE2C_CHECK(cu.cuStreamCreate(&e->stream_, CU_STREAM_NON_BLOCKING));
  COHERE2C_CHECK(cu.cuStreamCreate(&e->sideStream_, CU_STREAM_NON_BLOCKING));
  COHERE2C_CHECK(cu.cuEventCreate(&e->forkEvent_, CU_EVENT_DISABLE_TIMING));
  COHERE2C_CHECK(cu.cuEventCreate(&e->joinEvent_, CU_EVENT_DISABLE_TIMING));
  if (Status s = e->loadKernels(artifact); !s.ok())
    return s;
  if (Status s = e->checkGridSync(device); !s.ok())
    return Status::error(artifact.path() + ": " + s.message());
  COHERE2C_CHECK(cu.cublasLtCreate(&e->cublas_));
  if (Status s = e->checkWeightsFit(options.gpuMemoryUtilization); !s.ok())
    return Status::error(artifact.path() + ": " + s.message());
  if (Status s = e->loadWeights(weights); !s.ok())
    return s;
  for (DeviceArray *workspace : {&e->workspace_, &e->sideWorkspace_})
    if (Status s = e->ensure(*workspace, kWorkspaceBytes); !s.ok())
      return s;
  if (Status s = e->planMemory(options); !s.ok())
    return Status::error(artifact.path() + ": " + s.message());
  e->limits_ = StepLimits::of(m, options.blockSize, options.numBlocks);
  COHERE2C_CHECK(cu.cuStreamSynchronize(e->stream_));
  return e;
}

Status CudaExecutor::loadKernels(const LoadedArtifact &artifact) {
  // The cubin for sm_90a; the PTX when the driver cannot take it.
  StatusOr<void *> cubin = artifact.symbol("cohere2c_cubin");
  StatusOr<void *> ptx = artifact.symbol("cohere2c_ptx");
  if (!cubin.ok() || !ptx.ok())
    return Status::error(artifact.path() +
                         ": no kernel images in the artifact");
  if (api_->cuModuleLoadData(&module_, *cubin) != CUDA_SUCCESS)
    COHERE2C_CHECK(api_->cuModuleLoadData(&module_, *ptx));
  const LaunchPlan &plan = manifest_->launchPlan;
  std::vector<std::string> names;
  for (const PlanStep &step : plan.steps)
    if (step.kind == PlanStep::Kind::Kernel)
      names.push_back(step.kernel);
  for (const auto &[dtype, kernel] : plan.weightFills)
    names.push_back(kernel);
  for (const std::string &kernel : names) {
    if (kernels_.count(kernel))
      continue;
    CUfunction f;
    Status s =
        api_->check(api_->cuModuleGetFunction(&f, module_, kernel.c_str()),
                    "cuModuleGetFunction");
    if (!s.ok())
      return Status::error(s.message() + " (" + kernel + ")");
    kernels_[kernel] = f;
  }
  return Status::success();
}

Status CudaExecutor::checkGridSync(CUdevice device) {
  int sms = 0;
  COHERE2C_CHECK(api_->cuDeviceGetAttribute(
      &sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device));
  for (const PlanStep &step : manifest_->launchPlan.steps) {
    if (step.kind != PlanStep::Kind::Kernel || !step.spec.gridSync)
      continue;
    int perSM = 0;
    COHERE2C_CHECK(api_->cuOccupancyMaxActiveBlocksPerMultiprocessor(
        &perSM, kernels_[step.kernel], (int)step.blockX, 0));
    if ((int64_t)perSM * sms < step.gridY)
      return Status::error(
          "kernel " + step.kernel + " needs its " + std::to_string(step.gridY) +
          " blocks resident at once (they wait for each other), but " +
          deviceName_ + " holds " + std::to_string(perSM * sms) + " (" +
          std::to_string(sms) + " SMs x " + std::to_string(perSM) +
          " blocks of " + std::to_string(step.blockX) + " threads)");
  }
  return Status::success();
}

CudaExecutor::~CudaExecutor() {
  if (!api_ || !context_)
    return;
  api_->cuCtxSetCurrent(context_);
  for (CUstream stream : {stream_, sideStream_})
    if (stream)
      api_->cuStreamSynchronize(stream);
  destroyGraphs();
  for (CUevent event : {forkEvent_, joinEvent_})
    if (event)
      api_->cuEventDestroy(event);
  for (CUstream stream : {stream_, sideStream_})
    if (stream)
      api_->cuStreamDestroy(stream);
  for (DeviceArray *a : {&weights_, &workspace_, &sideWorkspace_})
    if (a->ptr)
      api_->cuMemFree(a->ptr);
  for (const DeviceArray &a : tables_)
    if (a.ptr)
      api_->cuMemFree(a.ptr);
  for (DeviceArray &a : inputs_)
    if (a.ptr)
      api_->cuMemFree(a.ptr);
  for (auto &[name, a] : buffers_)
    if (a.ptr)
      api_->cuMemFree(a.ptr);
}

DType CudaExecutor::bufferDType(const std::string &name) const {
  for (const PlanBuffer &b : manifest_->launchPlan.buffers)
    if (b.name == name)
      return b.dtype;
  return DType::F32;
}

int64_t CudaExecutor::bytesPerBlock() const { return bytesPerBlock_; }

Status CudaExecutor::ensure(DeviceArray &array, size_t bytes) {
  if (bytes <= array.bytes)
    return Status::success();
  if (array.ptr) {
    for (CUstream stream : {stream_, sideStream_})
      COHERE2C_CHECK(api_->cuStreamSynchronize(stream));
    COHERE2C_CHECK(api_->cuMemFree(array.ptr));
    array = {};
    ++generation_; // captured graphs may hold the old address
  }
  size_t rounded = (bytes + 255) / 256 * 256;
  Status s = api_->check(api_->cuMemAlloc(&array.ptr, rounded), "cuMemAlloc");
  if (!s.ok())
    return Status::error(s.message() + " (" + std::to_string(rounded) +
                         " bytes)");
  array.bytes = rounded;
  return Status::success();
}

// Activation buffers and the logits are zero-filled when allocated. Kernels
// read only rows their step wrote; should one ever read further, it reads
// zeros, never a NaN bit pattern left by another process, which would
// survive a multiplication by zero. compute-sanitizer's initcheck also
// needs it: it does not see the TMA stores of cuBLASLt's Hopper GEMMs
// (every element of a GEMM's output is reported uninitialized when the next
// kernel reads it). The KV pool is not filled: attention must never read
// a KV row no step wrote, and initcheck checks exactly that
// (test/gpu/run_all.sh sanitize).
Status CudaExecutor::ensureZeroed(DeviceArray &array, size_t bytes) {
  size_t before = array.bytes; // a new allocation may reuse the address
  if (Status s = ensure(array, bytes); !s.ok())
    return s;
  if (array.bytes != before)
    COHERE2C_CHECK(api_->cuMemsetD8Async(array.ptr, 0, array.bytes, stream_));
  return Status::success();
}

Status CudaExecutor::ensureBuffers(const StepParamValues &params) {
  for (const PlanBuffer &b : manifest_->launchPlan.buffers) {
    Status s = ensureZeroed(buffers_[b.name], std::max<int64_t>(params[b.rows], 1) *
                                                  b.width * dtypeSize(b.dtype));
    if (!s.ok())
      return s;
  }
  return Status::success();
}

Status CudaExecutor::upload(DeviceArray &array, const void *data,
                            size_t bytes) {
  Status s = ensure(array, bytes);
  if (!s.ok() || bytes == 0)
    return s;
  COHERE2C_CHECK(api_->cuMemcpyHtoDAsync(array.ptr, data, bytes, stream_));
  return Status::success();
}

namespace {

/// Splits of k for a bf16 GEMM of m x n outputs (cuBLASLt's first algorithm
/// otherwise). A down projection at decode batch sizes has few output tiles
/// (at most 64 of 128 x 128 for an H200's 132 SMs) over a long k (at least
/// 3n). Measured on an H200 for Command R7B's (n 4096, k 14336;
/// bench/gemm_algos.cu --split-k; m 64, 128, 256, 512): 45.1, 46.2, 69.9,
/// 70.5 us unsplit, 36.5, 38.4, 46.7, 80.7 in two; its o projection (k = n)
/// only lost. Not timed for f32, and cuBLASLt refuses split-K for FP8 with
/// rowwise scales: both keep one.
int gemmSplits(cudaDataType_t in, int64_t m, int64_t n, int64_t k) {
  int64_t tiles = (m + 127) / 128 * ((n + 127) / 128);
  return in == CUDA_R_16BF && k >= 3 * n && tiles <= 64 ? 2 : 1;
}

} // namespace

// c[m, n] = alpha * a[m, k] @ w[n, k]^T [+ addend], row-major; in cuBLASLt's
// column-major terms D (n x m) = alpha * W^T (n x k) * A (k x m) + beta * C,
// C the addend (beta 1) or unused (beta 0).
Status CudaExecutor::gemm(const PlanStep &step, CUstream stream, CUdeviceptr a,
                          CUdeviceptr c, int64_t m, CUdeviceptr aScales,
                          CUdeviceptr addend) {
  // Names and sizes were checked on load (LaunchPlan::check).
  const WeightEntry *w = manifest_->weights.find(step.weight);
  bool fp8 = !step.weightScale.empty();
  const WeightEntry *wScales =
      fp8 ? manifest_->weights.find(step.weightScale) : nullptr;
  // The output is a plan buffer of its own dtype, or the f32 logits.
  DType outDType = step.args[1].kind == PlanArg::Kind::Buffer
                       ? bufferDType(step.args[1].name)
                       : DType::F32;
  cudaDataType_t in = fp8 ? CUDA_R_8F_E4M3 : cudaType(dtype_),
                 out = cudaType(outDType);
  cublasLtMatmulDesc_t desc;
  COHERE2C_CHECK(
      api_->cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  cublasOperation_t transpose = CUBLAS_OP_T;
  COHERE2C_CHECK(api_->cublasLtMatmulDescSetAttribute(
      desc, CUBLASLT_MATMUL_DESC_TRANSA, &transpose, sizeof(transpose)));
  if (fp8) {
    // Rowwise scales: D (n x m) = diag(w_scale) W^T A diag(a_scale).
    cublasLtMatmulMatrixScale_t outer =
        CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F;
    void *wScale = (void *)(weights_.ptr + wScales->offset),
         *xScale = (void *)aScales;
    COHERE2C_CHECK(api_->cublasLtMatmulDescSetAttribute(
        desc, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &outer, sizeof(outer)));
    COHERE2C_CHECK(api_->cublasLtMatmulDescSetAttribute(
        desc, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &outer, sizeof(outer)));
    COHERE2C_CHECK(api_->cublasLtMatmulDescSetAttribute(
        desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &wScale, sizeof(wScale)));
    COHERE2C_CHECK(api_->cublasLtMatmulDescSetAttribute(
        desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &xScale, sizeof(xScale)));
  }
  cublasLtMatrixLayout_t wLayout, aLayout, cLayout;
  COHERE2C_CHECK(
      api_->cublasLtMatrixLayoutCreate(&wLayout, in, step.k, step.n, step.k));
  COHERE2C_CHECK(
      api_->cublasLtMatrixLayoutCreate(&aLayout, in, step.k, m, step.k));
  COHERE2C_CHECK(
      api_->cublasLtMatrixLayoutCreate(&cLayout, out, step.n, m, step.n));
  auto key = std::make_tuple(m, step.n, step.k, (int)out, fp8);
  auto found = algos_.find(key);
  if (found == algos_.end()) {
    cublasLtMatmulPreference_t pref;
    COHERE2C_CHECK(api_->cublasLtMatmulPreferenceCreate(&pref));
    size_t workspace = kWorkspaceBytes;
    COHERE2C_CHECK(api_->cublasLtMatmulPreferenceSetAttribute(
        pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace,
        sizeof(workspace)));
    cublasLtMatmulHeuristicResult_t result;
    int count = 0;
    COHERE2C_CHECK(api_->cublasLtMatmulAlgoGetHeuristic(
        cublas_, desc, wLayout, aLayout, cLayout, cLayout, pref, 1, &result,
        &count));
    api_->cublasLtMatmulPreferenceDestroy(pref);
    if (count == 0)
      return Status::error("cuBLASLt has no algorithm for the GEMM of " +
                           step.weight);
    if (int32_t splits = gemmSplits(in, m, step.n, step.k); splits > 1) {
      // Partial sums reduced in f32 in the workspace by a separate kernel:
      // the same order every run (no atomics).
      cublasLtMatmulAlgo_t split = result.algo;
      uint32_t scheme = CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;
      cublasLtMatmulHeuristicResult_t checked;
      if (api_->cublasLtMatmulAlgoConfigSetAttribute(
              &split, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splits,
              sizeof(splits)) == CUBLAS_STATUS_SUCCESS &&
          api_->cublasLtMatmulAlgoConfigSetAttribute(
              &split, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &scheme,
              sizeof(scheme)) == CUBLAS_STATUS_SUCCESS &&
          api_->cublasLtMatmulAlgoCheck(cublas_, desc, wLayout, aLayout,
                                        cLayout, cLayout, &split,
                                        &checked) == CUBLAS_STATUS_SUCCESS &&
          checked.workspaceSize <= kWorkspaceBytes)
        result.algo = split;
    }
    found = algos_.emplace(key, result.algo).first;
  }
  float alpha = step.alpha, beta = step.plus ? 1 : 0;
  COHERE2C_CHECK(api_->cublasLtMatmul(
      cublas_, desc, &alpha, (void *)(weights_.ptr + w->offset), wLayout,
      (void *)a, aLayout, &beta, (void *)(step.plus ? addend : c), cLayout,
      (void *)c, cLayout, &found->second,
      (void *)(stream == sideStream_ ? sideWorkspace_ : workspace_).ptr,
      kWorkspaceBytes, stream));
  api_->cublasLtMatrixLayoutDestroy(wLayout);
  api_->cublasLtMatrixLayoutDestroy(aLayout);
  api_->cublasLtMatrixLayoutDestroy(cLayout);
  api_->cublasLtMatmulDescDestroy(desc);
  return Status::success();
}

void CudaExecutor::destroyGraphs() {
  for (auto &[key, g] : graphs_) {
    api_->cuGraphExecDestroy(g.exec);
    api_->cuGraphDestroy(g.graph);
  }
  graphs_.clear();
}

Status CudaExecutor::run(const StepInput &in, StepOutput &output) {
  if (Status s = in.check(limits_); !s.ok())
    return s;
  if (Status s =
          api_->check(api_->cuCtxSetCurrent(context_), "cuCtxSetCurrent");
      !s.ok())
    return s;
  const Manifest &m = *manifest_;
  int64_t tokens = in.ids.size(), rows = in.logitRows.size();
  int64_t vocab = m.config.vocabSize;
  // Block tables are passed with their width rounded up to a multiple of
  // kTableWidthStep (entries past a sequence's blocks are never read), so a
  // decode step's graph serves the next kTableWidthStep * block_size tokens.
  // Each group's tables are a slice of one host array that lives until the
  // step's end, as the asynchronous copies from it may not have read it
  // before they return.
  int64_t w = in.tableWidth,
          width = (w + kTableWidthStep - 1) / kTableWidthStep * kTableWidthStep,
          slice = in.numSeqs * width;
  std::vector<int32_t> padded(in.tables.size() * slice, 0);
  for (size_t g = 0; g < in.tables.size(); ++g) {
    for (int64_t r = 0; r < in.numSeqs; ++r)
      std::copy_n(in.tables[g].begin() + r * w, w,
                  padded.begin() + g * slice + r * width);
    if (Status s = upload(tables_[g], padded.data() + g * slice, slice * 4);
        !s.ok())
      return s;
  }
  std::vector<int32_t> generatedRows = in.generatedRows();
  StepParamValues params =
      stepParams(tokens, generatedRows.size(), rows, limits_.blockSize, width,
                 in.maxKeys(false), in.maxKeys(true), in.tokensOnly);
  struct Upload {
    PlanInput input;
    const void *data;
    size_t bytes;
  };
  for (const Upload &u :
       {Upload{PlanInput::Ids, in.ids.data(), in.ids.size() * 4},
        Upload{PlanInput::Positions, in.positions.data(),
               in.positions.size() * 4},
        Upload{PlanInput::Seqs, in.seqRows.data(), in.seqRows.size() * 4},
        Upload{PlanInput::Generated, in.generated.data(),
               in.generated.size() * 4},
        Upload{PlanInput::GeneratedRows, generatedRows.data(),
               generatedRows.size() * 4},
        Upload{PlanInput::LogitRows, in.logitRows.data(),
               in.logitRows.size() * 4},
        Upload{PlanInput::Temperatures, in.temperatures.data(),
               in.temperatures.size() * 4},
        Upload{PlanInput::NoiseSeeds, in.noiseSeeds.data(),
               in.noiseSeeds.size() * 8}}) {
    Status s = upload(input(u.input), u.data, u.bytes);
    if (!s.ok())
      return s;
  }
  Status s = ensureZeroed(input(PlanInput::Logits), std::max<int64_t>(rows, 1) * vocab * 4);
  if (!s.ok())
    return s;
  s = ensure(input(PlanInput::SampledTokens), std::max<int64_t>(rows, 1) * 4);
  if (!s.ok())
    return s;
  if (s = ensureBuffers(params); !s.ok())
    return s;
  // Decode steps (a token per sequence, each wanting logits) replay graphs;
  // prefill steps, whose sizes rarely repeat, launch directly.
  s = isDecodeStep(tokens, generatedRows.size(), in.numSeqs, rows)
          ? launchGraph(params)
          : enqueueSteps(params);
  if (!s.ok())
    return s;
  // A tokens-only batch copies a token per row (the plan's sample_tokens
  // kernel ran), else the rows of logits.
  if (in.tokensOnly) {
    output.sampledTokens.resize(rows);
    if (rows)
      COHERE2C_CHECK(api_->cuMemcpyDtoHAsync(
          output.sampledTokens.data(), input(PlanInput::SampledTokens).ptr,
          rows * 4, stream_));
  } else {
    output.logits.resize(rows * vocab);
    if (rows)
      COHERE2C_CHECK(api_->cuMemcpyDtoHAsync(output.logits.data(),
                                             input(PlanInput::Logits).ptr,
                                             rows * vocab * 4, stream_));
  }
  COHERE2C_CHECK(api_->cuStreamSynchronize(stream_));
  return Status::success();
}

Status CudaExecutor::launchGraph(const StepParamValues &params) {
  if (graphsGeneration_ != generation_) {
    destroyGraphs();
    graphsGeneration_ = generation_;
  }
  auto found = graphs_.find(params);
  if (found == graphs_.end()) {
    // Widths only grow while sequences decode: most old graphs are dead.
    if ((int64_t)graphs_.size() >= kMaxGraphs)
      destroyGraphs();
    COHERE2C_CHECK(api_->cuStreamBeginCapture(
        stream_, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    Status enqueued = enqueueSteps(params);
    Graph g;
    CUresult ended = api_->cuStreamEndCapture(stream_, &g.graph);
    if (!enqueued.ok()) {
      if (g.graph)
        api_->cuGraphDestroy(g.graph);
      return enqueued;
    }
    COHERE2C_CHECK(ended);
    Status instantiated =
        api_->check(api_->cuGraphInstantiateWithFlags(&g.exec, g.graph, 0),
                    "cuGraphInstantiateWithFlags");
    if (!instantiated.ok()) {
      api_->cuGraphDestroy(g.graph);
      return instantiated;
    }
    found = graphs_.emplace(params, g).first;
  }
  COHERE2C_CHECK(api_->cuGraphLaunch(found->second.exec, stream_));
  return Status::success();
}

Status
CudaExecutor::enqueueSteps(const StepParamValues &params) {
  const Manifest &m = *manifest_;
  auto pointer = [&](const PlanArg &a) -> CUdeviceptr {
    switch (a.kind) {
    case PlanArg::Kind::Buffer: // a column range of the buffer's rows
      return buffers_[a.name].ptr + a.column * dtypeSize(bufferDType(a.name));
    case PlanArg::Kind::Weight:
      return weights_.ptr + m.weights.find(a.name)->offset;
    case PlanArg::Kind::Input:
      if (a.input == PlanInput::KVTables)
        return tables_[a.group].ptr;
      return input(a.input).ptr;
    default:
      return 0;
    }
  };
  std::vector<uint64_t> values;
  std::vector<void *> args;
  bool sideStream = params[StepParam::SideStream], forked = false;
  // A step that fails between a fork and its join joins the side stream
  // first, so that a capture can end and the next step starts after both.
  auto fail = [&](const Status &s) {
    if (forked) {
      api_->cuEventRecord(joinEvent_, sideStream_);
      api_->cuStreamWaitEvent(stream_, joinEvent_, 0);
    }
    return s;
  };
  for (const PlanStep &step : m.launchPlan.steps) {
    // Fork: the side stream waits for the main one's work so far; join: the
    // reverse (each event waited on right after it is recorded, so one event
    // serves every fork, one every join). Without the side stream, every
    // step runs on the main one in plan order.
    CUstream stream = sideStream && step.side ? sideStream_ : stream_;
    if (step.kind == PlanStep::Kind::Fork ||
        step.kind == PlanStep::Kind::Join) {
      if (!sideStream)
        continue;
      bool fork = step.kind == PlanStep::Kind::Fork;
      CUevent event = fork ? forkEvent_ : joinEvent_;
      COHERE2C_CHECK(api_->cuEventRecord(event, fork ? stream_ : sideStream_));
      COHERE2C_CHECK(
          api_->cuStreamWaitEvent(fork ? sideStream_ : stream_, event, 0));
      forked = fork;
      continue;
    }
    if (step.kind == PlanStep::Kind::Gemm) {
      if (params[step.m] == 0)
        continue; // e.g. no logits wanted from a prefill chunk
      Status s = gemm(step, stream, pointer(step.args[0]),
                      pointer(step.args[1]), params[step.m],
                      step.weightScale.empty() ? 0 : pointer(step.args[2]),
                      step.plus ? pointer(step.args.back()) : 0);
      if (!s.ok())
        return fail(s);
      continue;
    }
    values.assign(step.args.size(), 0);
    args.assign(step.args.size(), nullptr);
    for (size_t i = 0; i < step.args.size(); ++i) {
      const PlanArg &a = step.args[i];
      values[i] = a.kind == PlanArg::Kind::Param ? params[a.param]
                  : a.kind == PlanArg::Kind::Int ? a.value
                                                 : pointer(a);
      args[i] = &values[i];
    }
    unsigned gridX = params[step.gridX];
    if (gridX == 0)
      continue;
    // Programmatic dependent launch: the kernel may start while the one
    // before it finishes; it waits for that one's results itself
    // (griddepcontrol.wait, KernelGenerator::waitForPreviousLaunch), after
    // reading what no earlier launch writes (the weights of a matrix-vector
    // kernel).
    CUlaunchAttribute early{};
    early.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    early.value.programmaticStreamSerializationAllowed = 1;
    CUlaunchConfig config{};
    config.gridDimX = gridX;
    config.gridDimY = (unsigned)step.gridY;
    config.gridDimZ = 1;
    config.blockDimX = (unsigned)step.blockX;
    config.blockDimY = 1;
    config.blockDimZ = 1;
    config.hStream = stream;
    config.attrs = &early;
    config.numAttrs = 1;
    Status launched =
        api_->check(api_->cuLaunchKernelEx(&config, kernels_[step.kernel],
                                           args.data(), nullptr),
                    "cuLaunchKernelEx");
    if (!launched.ok())
      return fail(Status::error(launched.message() + " (" + step.kernel + ")"));
  }
  return Status::success();
}

} // namespace cohere2c
