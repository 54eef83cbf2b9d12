// A "shared header" whose host code clang rejects: the error lies outside every kernel.
#pragma once
inline int host_helper(int n) { return n + not_declared_anywhere; }
