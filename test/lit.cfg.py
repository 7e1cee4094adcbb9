# lit configuration of the cohere2c regression suite.
import os
import sys
import lit.formats

config.name = "cohere2c"
config.test_format = lit.formats.ShTest(not config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "unit", "gpu", "data", "fuzz",
                   "serve"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.cohere2c_obj_root, "test")

# A build of the runtime side alone (COHERE2C_PREBUILT_COMPILER) runs the
# tests of the runtime's tools, with the compiler it was given; the
# compiler's own tests ran where it was built.
if config.cohere2c_runtime_only:
    config.excludes += ["Dialect", "Transforms", "Conversion", "Pipelines", "Target", "Frontend"]

# A build with AddressSanitizer (COHERE2C_SANITIZE): its allocator ends the
# process on a request beyond its limit (1 TiB) instead of failing it.
if "address" in config.cohere2c_sanitize.split(","):
    config.available_features.add("asan")

config.environment["PATH"] = os.pathsep.join(
    [config.cohere2c_tools_dir, config.cohere2c_compiler_dir, config.llvm_tools_dir,
     config.environment.get("PATH", "")])
config.substitutions.append(("%data", os.path.join(config.cohere2c_src_root, "test", "data")))
config.substitutions.append(("%python", sys.executable))

# ptxas from the CUDA toolkit (CUDA_HOME, else the standard location).
cuda_home = os.environ.get("CUDA_HOME", "/usr/local/cuda")
config.substitutions.append(("%ptxas", os.path.join(cuda_home, "bin", "ptxas")))

# Tests of what a machine without a GPU does with a cuda artifact.
import shutil, subprocess
has_gpu = shutil.which("nvidia-smi") is not None and \
    subprocess.run(["nvidia-smi", "-L"], capture_output=True).returncode == 0
if not has_gpu:
    config.available_features.add("no-gpu")
