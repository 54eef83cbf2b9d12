//===- RangeMetrics.cpp - The metrics of KLOOP_CUPTI_METRICS (no CUDA driver needed) -===//
#include "RangeProfiler.h"

#include <cupti_result.h>

namespace kloop {
namespace cupti {

// PerfWorks / Nsight Compute metric names (sm_90). The stall reasons are the warp states of the Nsight
// Compute "Warp State Statistics" section: percent of active warp cycles a warp spent in that state.
const char *const KernelMetricNames[] = {
    "gpu__time_duration.sum",
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
    "lts__t_sector_hit_rate.pct",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    "smsp__warp_issue_stalled_barrier_per_warp_active.pct",
    "smsp__warp_issue_stalled_branch_resolving_per_warp_active.pct",
    "smsp__warp_issue_stalled_dispatch_stall_per_warp_active.pct",
    "smsp__warp_issue_stalled_drain_per_warp_active.pct",
    "smsp__warp_issue_stalled_imc_miss_per_warp_active.pct",
    "smsp__warp_issue_stalled_lg_throttle_per_warp_active.pct",
    "smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct",
    "smsp__warp_issue_stalled_math_pipe_throttle_per_warp_active.pct",
    "smsp__warp_issue_stalled_membar_per_warp_active.pct",
    "smsp__warp_issue_stalled_mio_throttle_per_warp_active.pct",
    "smsp__warp_issue_stalled_misc_per_warp_active.pct",
    "smsp__warp_issue_stalled_no_instruction_per_warp_active.pct",
    "smsp__warp_issue_stalled_not_selected_per_warp_active.pct",
    "smsp__warp_issue_stalled_selected_per_warp_active.pct",
    "smsp__warp_issue_stalled_short_scoreboard_per_warp_active.pct",
    "smsp__warp_issue_stalled_sleeping_per_warp_active.pct",
    "smsp__warp_issue_stalled_tex_throttle_per_warp_active.pct",
    "smsp__warp_issue_stalled_wait_per_warp_active.pct",
};
const size_t KernelMetricCount = sizeof(KernelMetricNames) / sizeof(KernelMetricNames[0]);

std::string cuptiFailure(const char *Call, int Result) {
  CUptiResult R = static_cast<CUptiResult>(Result);
  const char *Name = nullptr, *Message = nullptr;
  std::string Out = std::string(Call) + ": ";
  if (cuptiGetResultString(R, &Name) == CUPTI_SUCCESS && Name)
    Out += Name;
  else
    Out += "CUptiResult " + std::to_string(Result);
  if (cuptiGetErrorMessage(R, &Message) == CUPTI_SUCCESS && Message && *Message)
    Out += std::string(" (") + Message + ")";
  return Out;
}

} // namespace cupti
} // namespace kloop
