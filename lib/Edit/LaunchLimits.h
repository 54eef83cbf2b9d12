//===- LaunchLimits.h - CUDA's launch limits on the edited inventory -*- C++ -*-===//
//
// Internal to kloopEdit. The semantic preconditions of docs/edits.md that are
// checked on the edited code's inventory, where clang evaluated the constants:
// block, grid and dynamic shared-memory sizes and __launch_bounds__. A value that
// is not a compile-time constant (no "value" in the inventory) cannot be checked
// and passes.
//
//===----------------------------------------------------------------------===//
#ifndef KLOOP_LIB_EDIT_LAUNCHLIMITS_H
#define KLOOP_LIB_EDIT_LAUNCHLIMITS_H

#include "EditKind.h"

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace kloop {
namespace edit {

/// The threads of a constant block (the product of its dimensions).
std::optional<long long> blockThreads(const nlohmann::json &Block);
/// "64x32x1".
std::string dimsText(const nlohmann::json &Dims);
/// A launch site's inventory member, or null (const json's operator[] must not miss).
const nlohmann::json &member(const nlohmann::json &Data, const char *Name);
/// "block 64x32x1 = 2048 threads; ..." when a constant block is outside 1 to 1024 threads.
std::optional<std::string> blockOutOfRange(const nlohmann::json &Block);
/// "grid 0x1x1: x is 0, but ..." when a constant grid is outside CUDA's maximum grid size
/// (CUDA C Programming Guide, "Features and Technical Specifications": x 2^31-1, y and z 65535).
std::optional<std::string> gridOutOfRange(const nlohmann::json &Grid);
/// "shared memory '-1' = -1 bytes, which is negative ..." when a constant dynamic shared-memory
/// size is below 0 or above MaxDynamicSharedMemory (227 KiB, sm_90 with opt-in).
std::optional<std::string> sharedMemoryOutOfRange(const nlohmann::json &Smem);
/// "launch site S launches 'k' with block ... more than __launch_bounds__ max_threads M": a
/// visible launch of \p Kernel (only \p OnlySite when given) with a constant block larger than
/// the kernel's constant max_threads.
std::optional<std::string> launchBoundsProblem(const std::string &Kernel, const EditedInventory &Inv,
                                               const std::string *OnlySite);
/// The first launch (block, grid, shared memory) or kernel (__launch_bounds__ over 1024) of the
/// edited code that breaks a limit: "launch site S then launches 'k' with ...".
std::optional<std::string> launchLimitProblem(const EditedInventory &Inv);

} // namespace edit
} // namespace kloop

#endif
