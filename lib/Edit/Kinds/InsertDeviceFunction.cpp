//===- InsertDeviceFunction.cpp - insert_device_function: code before a kernel ===//
//
// docs/edits.md, "insert_device_function". `code` (a __device__ function, no
// kernel) goes before the kernel, its template header included; the added-code
// checks (AddedCode.h) decide what else it may declare.
//
//===----------------------------------------------------------------------===//
#include "../EditKind.h"

using namespace llvm;

namespace kloop {
namespace edit {
namespace {

class InsertDeviceFunction : public AddsBesideKernel {
public:
  EditKind kind() const override { return EditKind::InsertDeviceFunction; }

  Outcome plan(const Edit &Ed, const Entity &E, PlanContext &C) const override {
    StringRef Code = StringRef(Ed.Code).trim();
    if (!Code.contains("__device__"))
      return refuse("'code' must define a __device__ function");
    if (Code.contains("__global__"))
      return refuse("'code' defines a __global__ kernel; use add_kernel_variant for new kernels");
    Outcome O = accept({TextEdit{C.fileOf(E), E.Span.BeginOffset, 0, Code.str() + "\n\n", 0}});
    O.Regions.push_back(C.regionOf(E));
    return O;
  }
};

} // namespace

void registerInsertDeviceFunction(EditKindRegistry &R) { R.add<InsertDeviceFunction>(); }

} // namespace edit
} // namespace kloop
