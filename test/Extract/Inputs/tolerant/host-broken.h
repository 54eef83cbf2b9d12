// A "shared header" whose host code clang rejects (only the host side sees it): the error lies
// outside every kernel.
#pragma once
#ifndef __CUDA_ARCH__
inline int host_helper(int n) { return n + not_declared_anywhere; }
#endif
