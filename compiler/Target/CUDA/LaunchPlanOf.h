//===- LaunchPlanOf.h - plan.step -> the artifact's LaunchPlan ---*- C++ -*-===//
#ifndef COHERE2C_TARGET_CUDA_LAUNCHPLANOF_H
#define COHERE2C_TARGET_CUDA_LAUNCHPLANOF_H

#include "Artifact/LaunchPlan.h"
#include "cohere2c/Dialect/Plan/IR/Plan.h"

namespace mlir::cohere2c {

/// The launch plan the artifact carries, read from `step` (verified IR:
/// every argument is one of the plan dialect's, PlanOps.td). The runtime
/// checks it again against the weights (LaunchPlan::check).
::cohere2c::LaunchPlan launchPlanOf(plan::StepOp step);

} // namespace mlir::cohere2c

#endif // COHERE2C_TARGET_CUDA_LAUNCHPLANOF_H
