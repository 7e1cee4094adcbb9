//===- LogitsTarget.h - Where cohere2c-run --logits-out writes ------------===//
//
// A regular file (or a new one) is replaced at the end by a temporary file
// of its folder renamed over it, so that a run that fails leaves it as it
// was and no reader sees half a file; anything else (/dev/stdout, a FIFO)
// is written through. Symbolic links are followed.
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_TOOLS_RUN_LOGITSTARGET_H
#define COHERE2C_TOOLS_RUN_LOGITSTARGET_H

#include "Model/SafeTensors.h"
#include "Support/Status.h"

#include <string>
#include <vector>

namespace cohere2c {

struct LogitsTarget {
  std::string given; // the path as given, for messages
  std::string path;  // the file written: `given`, or what its links name
  bool replace = true;

  /// Refuses an empty path, a folder, one of the run's `inputs` (artifact,
  /// weights, checkpoint files), and what cannot be written: the file
  /// itself where it is not replaced, else its folder.
  static StatusOr<LogitsTarget> of(const std::string &given,
                                   const std::vector<std::string> &inputs);
  std::string folder() const;
  Status write(const std::vector<F32Tensor> &tensors) const;
};

} // namespace cohere2c

#endif // COHERE2C_TOOLS_RUN_LOGITSTARGET_H
