//===- ModelTest.cpp - The inventory as typed values ----------------------===//
#include "kloop/Inventory/Model.h"

#include "gtest/gtest.h"

using nlohmann::json;
using namespace kloop;

namespace {

json location(unsigned Line) {
  return {{"file", "k.cu"}, {"begin", {{"line", Line}, {"column", 1}}}, {"end", {{"line", Line + 2}, {"column", 3}}}};
}

/// A document with one of each entity and the variants mergeInventory writes:
/// null and absent members, a range-based for, a template parameter as a
/// constant, a launch site whose kernel is unresolved, a translation unit that
/// was listed twice and one that could not be parsed.
json sampleDoc() {
  json Sym = {{"mangled", "_Z1kILi4EEvPf"}, {"clang_mangled", "_Z1kILi4EEvPf"}, {"linkage", "external"},
              {"match_key", "void k<4>(float*)"}, {"nvcc_known", true}};
  json Inst = Sym;
  Inst["id"] = "k<4>";
  json Internal = Sym;
  Internal["nvcc_known"] = false;
  Internal["nvcc_unknown_reason"] = "no module id tail";
  Inst["template_args"] = "<4>";
  json Loop1 = {{"id", "k/loop#1"}, {"kind", "loop"}, {"location", location(5)}, {"editable", true},
                {"loop_kind", "for"}, {"depth", 0}, {"parent", nullptr}, {"condition", "i < N"},
                {"trip_count", 8}, {"unroll", {{"spelling", "unroll"}, {"count", 4}, {"count_expr", "4"}, {"line", 4}}},
                {"elementwise",
                 {{"refusal", nullptr}, {"var", "i"}, {"var_type", "int"},
                  {"init", "blockIdx.x * blockDim.x + threadIdx.x"}, {"bound", "n"}, {"stride", "stride"},
                  {"body", "{ p[i] = 2 * p[i]; }"}, {"other_effects", "statement 3 at line 9"},
                  {"stride_kind", "grid"}, {"block_extent", "BLOCK"},
                  {"reductions", {{{"var", "s"}, {"type", "float"}, {"op", "+"}, {"reassociates", true},
                                   {"combined_in", "red"}, {"not_combined", nullptr}, {"tree_stmt", 5}}}},
                  {"accesses", {{{"param", "p"}, {"root", "p"}, {"element_type", "float"}, {"element_bytes", 4},
                                 {"begin", 2}, {"end", 6}, {"read", false}, {"written", true},
                                 {"unconditional", true}}}}}},
                {"dot_product",
                 {{"refusal", nullptr}, {"tile", {{"expr", "T"}, {"value", nullptr}}}, {"tile_param", 0},
                  {"var", "k"}, {"var_type", "int"}, {"init", "0"}, {"bound", "K"}, {"acc", "acc"},
                  {"acc_type", "float"}, {"row_operand", "a[k]"}, {"col_operand", "b[k * N + col]"},
                  {"row_type", "float"}, {"col_type", "float"}, {"row_bytes", 4}, {"col_bytes", 4},
                  {"prelude", {"const int row = blockIdx.y * T + kloop_ty;", "float acc = 0.f;"}},
                  {"row_terms", {"row >= M"}}, {"col_terms", {"col >= N"}},
                  {"after", {"c[row * N + col] = acc;"}}}}};
  json Loop2 = {{"id", "k/loop#2"}, {"kind", "loop"}, {"location", location(6)}, {"editable", false},
                {"not_editable_reason", "comes from macro 'FOR'"}, {"loop_kind", "range_for"}, {"depth", 1},
                {"parent", "k/loop#1"}, {"trip_count", nullptr},
                {"unroll", {{"spelling", "unroll"}, {"count", nullptr}, {"state", "full"}}}, {"elementwise", nullptr},
                {"dot_product", nullptr}};
  json Shared = {{"id", "k/shared:tile"}, {"kind", "shared_array"}, {"location", location(3)}, {"editable", true},
                 {"name", "tile"}, {"type", "float[N][32]"}, {"element_type", "float"},
                 {"dims", {{{"expr", "N"}, {"value", nullptr}}, {{"expr", "32"}, {"value", 32}}}},
                 {"bytes", nullptr}, {"extern", false}, {"dynamic", false}, {"stmt", 2},
                 {"decl_text", "__shared__ float tile[N][32];"}, {"escapes", nullptr},
                 {"column_access", "tile[threadIdx.x][threadIdx.y] at line 13"}};
  json Local = {{"id", "k/const:n"}, {"kind", "local_constant"}, {"location", location(2)}, {"editable", true},
                {"name", "n"}, {"type", "const int"}, {"init", "N * 2"}, {"constexpr", true}, {"value", nullptr}};
  // Facts of the rules warp-shuffle-reductions and privatize-atomics: a tree in a device function with
  // its calls, a loop that is not the tree, one atomic target.
  json Tree = {{"function", "device:tree"}, {"line", 9}, {"form", nullptr}, {"op", "fmaxf"},
               {"element_type", "float"}, {"array", "a"}, {"thread_index", "tid"}, {"stride_var", "s"},
               {"thread_index_proof", "threadIdx.x"}, {"thread_index_unproved", nullptr},
               {"start", {{"expr", "B / 2"}, {"value", nullptr}}}, {"pragma", false},
               {"loop_text", "for (int s = B / 2; s > 0; s >>= 1) {}"}, {"cond_offset", 20}, {"cond_length", 5},
               {"stmt", nullptr}, {"function_name", "tree"}, {"function_text", "__device__ void tree() {}"},
               {"name_offset", 16}, {"loop_offset", 24},
               {"calls", {{{"line", 30}, {"stmt", 5}, {"text", "tree<B>(a, tid);"}, {"name_offset", 0}},
                          {{"line", 31}, {"stmt", nullptr}, {"text", nullptr}, {"name_offset", nullptr}}}}};
  json NotTree = {{"function", "k"}, {"line", 12}, {"form", "the stride does not halve each step"}, {"op", nullptr},
                  {"element_type", nullptr}, {"array", nullptr}, {"thread_index", nullptr}, {"stride_var", nullptr},
                  {"thread_index_proof", nullptr}, {"thread_index_unproved", nullptr},
                  {"start", nullptr}, {"pragma", true}, {"loop_text", ""}, {"cond_offset", 0}, {"cond_length", 0},
                  {"stmt", 4}, {"function_name", nullptr}, {"function_text", nullptr}, {"name_offset", nullptr},
                  {"loop_offset", nullptr}, {"calls", json::array()}};
  json Target = {{"param", "k/param:out"}, {"name", "out"}, {"element_type", "unsigned int"}, {"element_bytes", 4},
                 {"other_use", nullptr}, {"returns", "`return` at line 4"}, {"body_text", "{ atomicAdd(&out[c], 1u); }"},
                 {"atomics", {{{"line", 7}, {"function", "atomicAdd"}, {"index", "c"}, {"bound", 256},
                               {"result_used", false}, {"base_offset", 13}},
                              {{"line", 8}, {"function", "atomicMax"}, {"index", "i"}, {"bound", nullptr},
                               {"result_used", true}, {"base_offset", nullptr}}}}};
  json Kernel = {
      {"id", "k"}, {"location", location(1)}, {"editable", true}, {"status", "ok"}, {"errors", json::array()},
      {"name", "k"}, {"qualified_name", "k"}, {"signature", "(float *)"}, {"static", false},
      {"anonymous_namespace", false}, {"explicit_specialization", false}, {"library", false},
      {"mangled", {"_Z1kILi4EEvPf"}}, {"symbols", {Sym, Internal}}, {"instantiations", {Inst}},
      {"template_params", {{{"name", "N"}, {"kind", "value"}, {"id", "k/tparam:N"}, {"type", "int"}, {"default", nullptr}},
                           {{"name", "T"}, {"kind", "type"}}}},
      {"launch_bounds", {{"id", "k/launch_bounds"}, {"max_threads", {{"expr", "256"}, {"value", 256}}},
                         {"min_blocks", {{"expr", "2"}, {"value", 2}}},
                         {"max_blocks_per_cluster", {{"expr", "4"}, {"value", 4}}}}},
      {"params", {{{"id", "k/param:out"}, {"name", "out"}, {"type", "float *"}, {"pointer", true},
                   {"const_pointee", false}, {"restrict", false}, {"written", true}, {"write_evidence", "store at line 7"}},
                  {{"id", "k/param:n"}, {"name", "n"}, {"type", "int"}, {"pointer", false}, {"const_pointee", false},
                   {"restrict", false}, {"written", nullptr}, {"write_evidence", nullptr}}}},
      {"loops", {Loop1, Loop2}}, {"shared_arrays", {Shared}}, {"local_constants", {Local}},
      {"calls", {"device:helper"}}, {"launch_sites", {"k.cu:run/launch#1"}},
      {"tree_reductions", {Tree, NotTree}}, {"atomic_targets", {Target}},
      {"float_ops", {{"body_text", "{ y = expf(x) / s; }"},
                     {"ops", {{{"function", "expf"}, {"line", 3}, {"begin", 6}, {"end", 13}, {"split", 10}},
                              {{"function", "/"}, {"line", 3}, {"begin", 6}, {"end", 17}, {"split", 14}}}}}},
      {"index_2d", {{"refusal", nullptr}, {"x_var", "row"}, {"y_var", "col"}, {"x_stmt", 1}, {"y_stmt", 2},
                    {"x_text", "int row = blockIdx.x * blockDim.x + threadIdx.x;"},
                    {"y_text", "int col = blockIdx.y * blockDim.y + threadIdx.y;"}, {"x_thread", 47},
                    {"y_thread", 47}, {"strided", "in[row * n + col] at line 4"}}},
      {"indirect_pointer", "`o.p` (k.cu:8, in 'k'): a pointer read from memory"}};
  json Library = Kernel;
  Library["float_ops"] = nullptr;
  Library["index_2d"] = nullptr;
  Library["indirect_pointer"] = nullptr;
  Library["id"] = "cub::Kernel";
  Library["library"] = true;
  Library["signature"] = nullptr;
  Library["launch_bounds"] = nullptr;
  Library["editable"] = false;
  Library["not_editable_reason"] = "is in a system header";
  json DeviceFn = {{"id", "device:helper"}, {"name", "helper"}, {"location", location(20)}, {"editable", false},
                   {"not_editable_reason", "has 1 compile error(s), the first: k.cu:21:3: error: x [device]"},
                   {"status", "error"}, {"errors", {"k.cu:21:3: error: x [device]"}}, {"host_device", false},
                   {"template", false}, {"calls", json::array()}, {"called_by", {"k"}}};
  json Site = {{"id", "k.cu:run/launch#1"}, {"location", location(30)}, {"editable", true}, {"status", "ok"},
               {"errors", json::array()}, {"via", "<<<>>>"}, {"kernel", "k"}, {"callee", "k<4>"}, {"function", "run"},
               {"grid", {{"expr", "grid"}, {"value", nullptr}, {"via_variable", "grid"}}},
               {"block", {{"expr", "256"}, {"value", {256, 1, 1}}}},
               {"shared_memory", {{"expr", "0"}, {"value", 0}}}, {"stream", {{"expr", "s"}}},
               {"template_args", {{{"expr", "4"}, {"value", 4}}}}};
  json Unresolved = {{"id", "k.cu:run/launch#2"}, {"location", location(31)}, {"editable", true}, {"status", "ok"},
                     {"errors", json::array()}, {"via", "cudaLaunchKernel"}, {"kernel", nullptr}, {"callee", "fp"},
                     {"function", "run"}, {"grid", nullptr}, {"block", nullptr}, {"shared_memory", nullptr},
                     {"stream", nullptr}, {"template_args", json::array()}};
  json Use = {{"constant", "macro:BLOCK"}, {"context", "block_size"}, {"owner", "k.cu:run/launch#1"},
              {"file", "k.cu"}, {"line", 30}, {"column", 12}};
  json Macro = {{"id", "macro:BLOCK"}, {"location", location(1)}, {"editable", true}, {"constant_kind", "macro"},
                {"name", "BLOCK"}, {"init", "BLOCK 256"}, {"value", 256}, {"command_line", false}, {"uses", {Use}},
                {"hardware_fact", nullptr}};
  json Warp = {{"id", "macro:WARP"}, {"location", location(2)}, {"editable", true}, {"constant_kind", "macro"},
               {"name", "WARP"}, {"init", "WARP 32"}, {"value", 32}, {"command_line", false}, {"uses", {Use}},
               {"hardware_fact", {{"reason", "used as the shuffle width at k.cu:9"},
                                  {"uses", {{{"constant", "macro:WARP"}, {"context", "shuffle width"}, {"owner", "k"},
                                             {"file", "k.cu"}, {"line", 9}, {"column", 40}}}}}}};
  json TParam = {{"id", "k/tparam:N"}, {"location", location(1)}, {"editable", true}, {"constant_kind", "template_param"},
                 {"kind", "template_param"}, {"name", "N"}, {"type", "int"}, {"default", nullptr},
                 {"uses", {{{"constant", "k/tparam:N"}, {"context", "array_size"}, {"owner", "k"}}}},
                 {"hardware_fact", nullptr}};
  json LocalC = Local;
  LocalC["constant_kind"] = "local_constant";
  LocalC["uses"] = {{{"constant", "k/const:n"}, {"context", "loop_bound"}, {"owner", "k"}}};
  LocalC["hardware_fact"] = nullptr;
  return {{"schema", "kloop-inventory"},
          {"version", 1},
          {"root", "/src"},
          {"translation_units",
           {{{"file", "k.cu"}, {"status", "ok"}, {"sides", {{"device", "ok"}, {"host", "ok"}}}, {"errors", json::array()}},
            {{"file", "k.cu"}, {"entry", 3}, {"status", "partial"}, {"sides", {{"device", "error"}, {"host", "ok"}}},
             {"errors", {"k.cu:21:3: error: x [device]"}}},
            {{"file", "gone.cu"}, {"status", "error"}, {"errors", {"gone.cu: no such file"}}}}},
          {"kernels", {Kernel, Library}},
          {"device_functions", {DeviceFn}},
          {"launch_sites", {Site, Unresolved}},
          {"constants", {Macro, Warp, TParam, LocalC}}};
}

TEST(InventoryModel, RoundTripsEveryVariant) {
  json D = sampleDoc();
  llvm::Expected<inv::Inventory> I = inv::inventoryFromJSON(D, "sample", /*Strict=*/true);
  ASSERT_TRUE(static_cast<bool>(I)) << llvm::toString(I.takeError());
  EXPECT_EQ(inv::toJSON(*I), D) << inv::toJSON(*I).dump(1);
}

TEST(InventoryModel, ReadsTypedFields) {
  llvm::Expected<inv::Inventory> I = inv::inventoryFromJSON(sampleDoc(), "sample");
  ASSERT_TRUE(static_cast<bool>(I)) << llvm::toString(I.takeError());
  const inv::Kernel *K = I->kernel("k");
  ASSERT_NE(K, nullptr);
  EXPECT_TRUE(K->State.ok());
  ASSERT_EQ(K->Loops.size(), 2u);
  EXPECT_EQ(K->Loops[0].TripCount, 8);
  EXPECT_EQ(K->Loops[0].UnrollPragma->Count, 4);
  EXPECT_FALSE(K->Loops[1].Condition.has_value());
  EXPECT_EQ(K->Loops[1].UnrollPragma->State, "full");
  EXPECT_EQ(K->Bounds->MinBlocks->Value, 2);
  EXPECT_EQ(K->Params[0].Written, true);
  EXPECT_FALSE(K->Params[1].Written.has_value());
  EXPECT_FALSE(K->SharedArrays[0].Dims[0].Value.has_value());
  const inv::LaunchSite *S = I->launchSite("k.cu:run/launch#1");
  ASSERT_NE(S, nullptr);
  ASSERT_TRUE(S->Block && S->Block->Value);
  EXPECT_EQ((*S->Block->Value)[0], 256);
  EXPECT_EQ(S->Stream, "s");
  EXPECT_FALSE(I->LaunchSites[1].Kernel.has_value());
  EXPECT_EQ(I->constant("macro:BLOCK")->Uses[0].Context, "block_size");
  EXPECT_FALSE(I->constant("macro:BLOCK")->Hardware.has_value());
  EXPECT_EQ(I->constant("macro:WARP")->Hardware->Uses[0].Context, "shuffle width");
  EXPECT_EQ(I->DeviceFunctions[0].CalledBy, std::vector<std::string>{"k"});
  EXPECT_EQ(K->SharedArrays[0].Stmt, 2u);
  ASSERT_TRUE(K->Loops[0].ElementwiseFacts.has_value());
  EXPECT_EQ(K->Loops[0].ElementwiseFacts->Accesses[0].End, 6u);
  EXPECT_TRUE(K->Loops[0].ElementwiseFacts->Accesses[0].Unconditional);
  EXPECT_FALSE(K->Loops[1].ElementwiseFacts.has_value());
  EXPECT_FALSE(K->SharedArrays[0].Escapes.has_value());
  EXPECT_EQ(I->TranslationUnits[1].Entry, 3u);
  EXPECT_FALSE(I->TranslationUnits[2].DeviceSide.has_value());
  EXPECT_EQ(I->kernel("nope"), nullptr);
  ASSERT_EQ(K->TreeReductions.size(), 2u);
  EXPECT_EQ(K->TreeReductions[0].Op, "fmaxf");
  EXPECT_EQ(K->TreeReductions[0].Calls[0].Stmt, 5u);
  EXPECT_FALSE(K->TreeReductions[0].Calls[1].Text.has_value());
  EXPECT_EQ(K->TreeReductions[1].Form, "the stride does not halve each step");
  EXPECT_TRUE(K->TreeReductions[1].Pragma);
  EXPECT_FALSE(K->TreeReductions[1].Start.has_value());
  ASSERT_EQ(K->AtomicTargets.size(), 1u);
  EXPECT_EQ(K->AtomicTargets[0].Atomics[0].Bound, 256);
  EXPECT_FALSE(K->AtomicTargets[0].Atomics[1].Bound.has_value());
  EXPECT_TRUE(K->AtomicTargets[0].Atomics[1].ResultUsed);
  EXPECT_EQ(K->AtomicTargets[0].ElementBytes, 4);
  ASSERT_TRUE(K->FloatMath.has_value());
  ASSERT_EQ(K->FloatMath->Ops.size(), 2u);
  EXPECT_EQ(K->FloatMath->Ops[1].Function, "/");
  EXPECT_EQ(K->FloatMath->Ops[1].Split, 14u);
  ASSERT_TRUE(K->Index2DFacts.has_value());
  EXPECT_EQ(K->Index2DFacts->XThread, 47u);
  EXPECT_EQ(K->Index2DFacts->Strided, "in[row * n + col] at line 4");
  EXPECT_EQ(K->IndirectPointer, "`o.p` (k.cu:8, in 'k'): a pointer read from memory");
}

TEST(InventoryModel, ReadsKernelsWrittenBeforeTheRuleFacts) {
  json D = sampleDoc();
  for (json &K : D["kernels"]) {
    K.erase("tree_reductions");
    K.erase("atomic_targets");
    K.erase("float_ops");
    K.erase("index_2d");
    K.erase("indirect_pointer");
  }
  llvm::Expected<inv::Inventory> I = inv::inventoryFromJSON(D, "old", /*Strict=*/true);
  ASSERT_TRUE(static_cast<bool>(I)) << llvm::toString(I.takeError());
  EXPECT_TRUE(I->Kernels[0].TreeReductions.empty());
  EXPECT_TRUE(I->Kernels[0].AtomicTargets.empty());
  EXPECT_FALSE(I->Kernels[0].FloatMath.has_value());
  EXPECT_FALSE(I->Kernels[0].IndirectPointer.has_value());
}

std::string readError(const json &D, bool Strict = false) {
  llvm::Expected<inv::Inventory> I = inv::inventoryFromJSON(D, "inv.json", Strict);
  return I ? std::string("no error") : llvm::toString(I.takeError());
}

TEST(InventoryModel, ErrorsNameTheDocumentAndTheMember) {
  json D = sampleDoc();
  D["kernels"][0]["loops"][1]["depth"] = -1;
  EXPECT_EQ(readError(D), "inv.json: kernels[0].loops[1].depth: expected a non-negative 32-bit integer");
  D = sampleDoc();
  D["launch_sites"][0].erase("via");
  EXPECT_EQ(readError(D), "inv.json: launch_sites[0].via: missing");
  D = sampleDoc();
  D["kernels"][0]["params"][0]["written"] = "yes";
  EXPECT_EQ(readError(D), "inv.json: kernels[0].params[0].written: expected true or false or null");
  D = sampleDoc();
  D["launch_sites"][0]["block"]["value"] = {256, "x", 1};
  EXPECT_EQ(readError(D), "inv.json: launch_sites[0].block.value[1]: expected an integer or null");
  EXPECT_EQ(readError(json::array()), "inv.json: <root>: expected an object");
}

TEST(InventoryModel, RefusesOtherSchemasAndVersions) {
  json D = sampleDoc();
  D["schema"] = "kloop-profile";
  EXPECT_EQ(readError(D), "inv.json: schema: expected \"kloop-inventory\", not \"kloop-profile\"");
  D = sampleDoc();
  D["version"] = 2;
  EXPECT_EQ(readError(D), "inv.json: version: version 2 is not one this kloop reads (it reads version 1)");
}

TEST(InventoryModel, StrictReadsRefuseUnknownMembers) {
  json D = sampleDoc();
  D["kernels"][0]["loops"][0]["vectorized"] = true;
  EXPECT_EQ(readError(D, /*Strict=*/true), "inv.json: kernels[0].loops[0].vectorized: not a member this reader knows");
  EXPECT_EQ(readError(D, /*Strict=*/false), "no error");
}

} // namespace
