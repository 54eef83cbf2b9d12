// A macro defined only on the command line (-DBLOCK=256) has no source text that kloop could
// rewrite, and rewriting the compilation database would not change the build that wrote it. It
// is listed with its uses (a profile still explains it), but not editable, the reason naming the
// flag; kloop apply refuses a set_constant of it with that reason. A macro whose #ifndef default
// in the file is overridden by the command line (-DTILE=8) is the command line's too; without
// the flag, the file's definition is the one in effect, and it is editable.
// RUN: kloop extract %s --root %S -- %mockcuda -DBLOCK=256 -DTILE=8 > %t.json
// RUN: python3 %inputs/summarize.py < %t.json | FileCheck %s
// RUN: python3 -c "import json,sys; [print('REASON', c['id'], c['location']['file'], c['command_line'], c.get('not_editable_reason', '-')) for c in json.load(sys.stdin)['constants']]" < %t.json | FileCheck %s --check-prefix=REASON
// RUN: kloop extract %s --root %S -- %mockcuda -DBLOCK=256 | python3 %inputs/summarize.py | FileCheck %s --check-prefix=DEFAULT
// RUN: printf '{"version": 1, "rationale": "r", "edits": [{"kind": "set_constant", "id": "macro:BLOCK", "value": 128}]}' > %t.proposal.json
// RUN: not kloop apply %t.proposal.json %s --root %S -- %mockcuda -DBLOCK=256 2>&1 | FileCheck %s --check-prefix=APPLY
#include "cuda.h"
#ifndef TILE
#define TILE 4
#endif
__global__ void scale(float *p) {
  for (int i = 0; i < TILE; ++i)
    p[blockIdx.x * BLOCK * TILE + threadIdx.x * TILE + i] *= 2.f;
}
void run(float *p, int n) { scale<<<n / (BLOCK * TILE), BLOCK>>>(p); }
// CHECK: CONST macro:BLOCK kind=macro value=256 editable=0
// CHECK: USE macro:BLOCK block_size command-line-macro.cu:run/launch#1
// CHECK: CONST macro:TILE kind=macro value=8 editable=0
// REASON: REASON macro:BLOCK <command line> True is defined on the command line (-DBLOCK=256 in the compile command), not in a source file: kloop edits sources, not build flags; change the value where the build writes the flag
// REASON: REASON macro:TILE <command line> True is defined on the command line (-DTILE=8 in the compile command), not in a source file: kloop edits sources, not build flags; change the value where the build writes the flag
// DEFAULT: CONST macro:BLOCK kind=macro value=256 editable=0
// DEFAULT: CONST macro:TILE kind=macro value=4 editable=1
// APPLY: kloop apply: refused: edit #1 (set_constant macro:BLOCK): 'macro:BLOCK' is defined on the command line (-DBLOCK=256 in the compile command), not in a source file
