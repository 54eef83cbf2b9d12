// The harness's own header: the workload protects it, so its constant is never tuned.
#pragma once
#define PROTECTED_TILE 16
