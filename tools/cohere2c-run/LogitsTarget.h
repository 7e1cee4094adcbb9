//===- LogitsTarget.h - Where cohere2c-run writes logits ------------------===//
//
// --logits-out FILE and each --logits-dir file. A regular file (or a new
// one) is replaced at the end by a temporary file of its folder, written in
// full and synced, renamed over it: a run that fails (a full disk, a file
// size limit) or is interrupted leaves it as it was, and no reader sees half
// a file. Anything else (/dev/stdout, a FIFO) is written through. Symbolic
// links are followed.
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
  std::string option; // "--logits-out" or "--logits-dir", for messages
  std::string given;  // the path as given, for messages
  std::string path;   // the file written: `given`, or what its links name
  bool replace = true;

  /// Refuses an empty path, a folder, one of the run's `inputs` (artifact,
  /// weights, checkpoint files), and what cannot be written: the file
  /// itself where it is not replaced, else its folder. Errors start with
  /// `option` and name the path.
  static StatusOr<LogitsTarget> of(const std::string &option,
                                   const std::string &given,
                                   const std::vector<std::string> &inputs);
  std::string folder() const;
  /// Writes `tensors` (writeSafeTensors). Errors name the path and the OS's
  /// reason ("--logits-out: F: cannot write (No space left on device)");
  /// a replaced file is then as it was, and the temporary file is removed.
  Status write(const std::vector<F32Tensor> &tensors) const;

private:
  Status writeThrough(const std::vector<F32Tensor> &tensors) const;
};

} // namespace cohere2c

#endif // COHERE2C_TOOLS_RUN_LOGITSTARGET_H
