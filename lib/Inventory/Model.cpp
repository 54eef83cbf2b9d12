//===- Model.cpp - The inventory as typed values --------------------------===//
//
// One readFields (JSON -> value) and one write (value -> JSON) per type, in the
// order of docs/inventory.md. Members that are null in the document are
// std::optional and written back as null; members the writer omits unless they
// apply are written only when set.
//
//===----------------------------------------------------------------------===//
#include "kloop/Inventory/Model.h"
#include "kloop/Support/JSONReader.h"

using nlohmann::json;
using llvm::StringRef;

namespace kloop {
namespace inv {

//===--- reading ----------------------------------------------------------===//

static void readFields(JSONObject &O, Position &P) {
  O.read("line", P.Line);
  O.read("column", P.Column);
}

static void readFields(JSONObject &O, Location &L) {
  O.read("file", L.File);
  O.object("begin", L.Begin);
  O.object("end", L.End);
}

static void readEditability(JSONObject &O, Editability &E) {
  O.read("editable", E.Editable);
  O.read("not_editable_reason", E.NotEditableReason);
}

static void readHealth(JSONObject &O, Health &H) {
  O.read("status", H.Status);
  O.read("errors", H.Errors);
}

static void readFields(JSONObject &O, ExprValue &E) {
  O.read("expr", E.Expr);
  O.read("value", E.Value);
}

static void readFields(JSONObject &O, Symbol &S) {
  O.read("mangled", S.Mangled);
  O.read("clang_mangled", S.ClangMangled);
  O.read("linkage", S.Linkage);
  O.read("match_key", S.MatchKey);
  O.read("nvcc_known", S.NvccKnown);
  O.read("nvcc_unknown_reason", S.NvccUnknownReason);
}

static void readFields(JSONObject &O, Instantiation &I) {
  O.read("id", I.ID);
  O.read("template_args", I.TemplateArgs);
  readFields(O, I.Sym);
}

static void readFields(JSONObject &O, TemplateParam &T) {
  O.read("name", T.Name);
  O.read("kind", T.Kind);
  O.read("id", T.ID);
  O.read("type", T.Type);
  O.read("default", T.Default);
}

static void readFields(JSONObject &O, Param &P) {
  O.read("id", P.ID);
  O.read("name", P.Name);
  O.read("type", P.Type);
  O.read("pointer", P.Pointer);
  O.read("const_pointee", P.ConstPointee);
  O.read("restrict", P.Restrict);
  O.read("written", P.Written);
  O.read("write_evidence", P.WriteEvidence);
}

static void readRegion(JSONObject &O, RegionBase &R) {
  O.read("id", R.ID);
  O.read("kind", R.Kind);
  O.object("location", R.Loc);
  readEditability(O, R.Edit);
}

static void readFields(JSONObject &O, Unroll &U) {
  O.read("spelling", U.Spelling);
  O.read("count", U.Count);
  O.read("count_expr", U.CountExpr);
  O.read("state", U.State);
  O.read("line", U.Line);
}

//===--- Elementwise loops (rules vectorize-global-access, coarsen-grid-stride) ---===//

static void readFields(JSONObject &O, ElementwiseAccess &A) {
  O.read("param", A.Param);
  A.Root = A.Param;
  if (O.has("root")) // absent in inventories written before local pointers were analysed (journals)
    O.read("root", A.Root);
  O.read("element_type", A.ElementType);
  O.read("element_bytes", A.ElementBytes);
  O.read("begin", A.Begin);
  O.read("end", A.End);
  O.read("read", A.Read);
  O.read("written", A.Written);
  O.read("unconditional", A.Unconditional);
}

static void readFields(JSONObject &O, ElementwiseReduction &R) {
  O.read("var", R.Var);
  O.read("type", R.Type);
  O.read("op", R.Op);
  O.read("reassociates", R.Reassociates);
  O.read("combined_in", R.CombinedIn);
  O.read("not_combined", R.NotCombined);
  O.read("tree_stmt", R.TreeStmt);
}

static void readFields(JSONObject &O, Elementwise &E) {
  O.read("refusal", E.Refusal);
  O.read("var", E.Var);
  O.read("var_type", E.VarType);
  O.read("init", E.Init);
  O.read("bound", E.Bound);
  O.read("stride", E.Stride);
  O.read("body", E.Body);
  O.objects("accesses", E.Accesses);
  O.read("other_effects", E.OtherEffects);
  if (!O.has("stride_kind")) // inventories written before block-stride loops and reductions (journals)
    return;
  O.read("stride_kind", E.StrideKind);
  O.read("block_extent", E.BlockExtent);
  O.objects("reductions", E.Reductions);
}


static void readFields(JSONObject &O, DotProduct &D) {
  O.read("refusal", D.Refusal);
  O.object("tile", D.Tile);
  O.read("tile_param", D.TileParam);
  O.read("var", D.Var);
  O.read("var_type", D.VarType);
  O.read("init", D.Init);
  O.read("bound", D.Bound);
  O.read("acc", D.Acc);
  O.read("acc_type", D.AccType);
  O.read("row_operand", D.RowOperand);
  O.read("col_operand", D.ColOperand);
  O.read("row_type", D.RowType);
  O.read("col_type", D.ColType);
  O.read("row_bytes", D.RowBytes);
  O.read("col_bytes", D.ColBytes);
  O.read("prelude", D.Prelude);
  O.read("row_terms", D.RowTerms);
  O.read("col_terms", D.ColTerms);
  O.read("after", D.After);
}

static void readFields(JSONObject &O, Loop &L) {
  readRegion(O, L);
  O.read("loop_kind", L.LoopKind);
  O.read("depth", L.Depth);
  O.read("parent", L.Parent);
  O.object("unroll", L.UnrollPragma);
  O.read("condition", L.Condition);
  O.read("trip_count", L.TripCount);
  O.object("elementwise", L.ElementwiseFacts);
  if (O.has("dot_product")) // absent in inventories written before it existed (journals)
    O.object("dot_product", L.DotProductFacts);
}

static void readFields(JSONObject &O, SharedArray &S) {
  readRegion(O, S);
  O.read("name", S.Name);
  O.read("type", S.Type);
  O.read("element_type", S.ElementType);
  O.objects("dims", S.Dims);
  O.read("bytes", S.Bytes);
  O.read("extern", S.Extern);
  O.read("dynamic", S.Dynamic);
  O.read("stmt", S.Stmt);
  O.read("decl_text", S.DeclText);
  O.read("escapes", S.Escapes);
  O.read("column_access", S.ColumnAccess);
}

static void readFields(JSONObject &O, LocalConstant &C) {
  readRegion(O, C);
  O.read("name", C.Name);
  O.read("type", C.Type);
  O.read("init", C.Init);
  O.read("constexpr", C.Constexpr);
  O.read("value", C.Value);
}

static void readFields(JSONObject &O, LaunchBounds &B) {
  O.read("id", B.ID);
  O.object("max_threads", B.MaxThreads);
  O.object("min_blocks", B.MinBlocks);
  O.object("max_blocks_per_cluster", B.MaxBlocksPerCluster);
}

//--- facts of the rules warp-shuffle-reductions and privatize-atomics ---//

static void readFields(JSONObject &O, TreeCall &C) {
  O.read("line", C.Line);
  O.read("stmt", C.Stmt);
  O.read("text", C.Text);
  O.read("name_offset", C.NameOffset);
}

static void readFields(JSONObject &O, TreeReduction &T) {
  O.read("function", T.Function);
  O.read("line", T.Line);
  O.read("form", T.Form);
  O.read("op", T.Op);
  O.read("element_type", T.ElementType);
  O.read("array", T.Array);
  O.read("thread_index", T.ThreadIndex);
  O.read("stride_var", T.StrideVar);
  O.read("thread_index_proof", T.ThreadIndexProof);
  O.read("thread_index_unproved", T.ThreadIndexUnproved);
  O.object("start", T.Start);
  O.read("pragma", T.Pragma);
  O.read("loop_text", T.LoopText);
  O.read("cond_offset", T.CondOffset);
  O.read("cond_length", T.CondLength);
  O.read("stmt", T.Stmt);
  O.read("function_name", T.FunctionName);
  O.read("function_text", T.FunctionText);
  O.read("name_offset", T.NameOffset);
  O.read("loop_offset", T.LoopOffset);
  O.objects("calls", T.Calls);
}

static void readFields(JSONObject &O, AtomicSite &A) {
  O.read("line", A.Line);
  O.read("function", A.Function);
  O.read("index", A.Index);
  O.read("bound", A.Bound);
  O.read("result_used", A.ResultUsed);
  O.read("base_offset", A.BaseOffset);
}

static void readFields(JSONObject &O, AtomicTarget &A) {
  O.read("param", A.Param);
  O.read("name", A.Name);
  O.read("element_type", A.ElementType);
  O.read("element_bytes", A.ElementBytes);
  O.read("other_use", A.OtherUse);
  O.read("returns", A.Returns);
  O.read("body_text", A.BodyText);
  O.objects("atomics", A.Atomics);
}

static void readFields(JSONObject &O, FloatOp &F) {
  O.read("function", F.Function);
  O.read("line", F.Line);
  O.read("begin", F.Begin);
  O.read("end", F.End);
  O.read("split", F.Split);
}

static void readFields(JSONObject &O, FloatOps &F) {
  O.read("body_text", F.BodyText);
  O.objects("ops", F.Ops);
}

static void readFields(JSONObject &O, Index2D &I) {
  O.read("refusal", I.Refusal);
  O.read("x_var", I.XVar);
  O.read("y_var", I.YVar);
  O.read("x_stmt", I.XStmt);
  O.read("y_stmt", I.YStmt);
  O.read("x_text", I.XText);
  O.read("y_text", I.YText);
  O.read("x_thread", I.XThread);
  O.read("y_thread", I.YThread);
  O.read("strided", I.Strided);
}

/// The rules' facts of a kernel; absent in inventories written before they existed (journals).
static void readRuleFacts(JSONObject &O, Kernel &K) {
  if (O.has("tree_reductions"))
    O.objects("tree_reductions", K.TreeReductions);
  if (O.has("atomic_targets"))
    O.objects("atomic_targets", K.AtomicTargets);
  if (O.has("float_ops"))
    O.object("float_ops", K.FloatMath);
  if (O.has("index_2d"))
    O.object("index_2d", K.Index2DFacts);
  if (O.has("indirect_pointer"))
    O.read("indirect_pointer", K.IndirectPointer);
}

static void readFields(JSONObject &O, Kernel &K) {
  O.read("id", K.ID);
  O.object("location", K.Loc);
  readEditability(O, K.Edit);
  readHealth(O, K.State);
  O.read("name", K.Name);
  O.read("qualified_name", K.QualifiedName);
  O.read("signature", K.Signature);
  O.read("static", K.Static);
  O.read("anonymous_namespace", K.AnonymousNamespace);
  O.read("explicit_specialization", K.ExplicitSpecialization);
  O.read("library", K.Library);
  O.read("mangled", K.Mangled);
  O.objects("symbols", K.Symbols);
  O.objects("instantiations", K.Instantiations);
  O.objects("template_params", K.TemplateParams);
  O.object("launch_bounds", K.Bounds);
  O.objects("params", K.Params);
  O.objects("loops", K.Loops);
  O.objects("shared_arrays", K.SharedArrays);
  O.objects("local_constants", K.LocalConstants);
  O.read("calls", K.Calls);
  O.read("launch_sites", K.LaunchSites);
  readRuleFacts(O, K);
}

static void readFields(JSONObject &O, DeviceFunction &F) {
  O.read("id", F.ID);
  O.read("name", F.Name);
  O.object("location", F.Loc);
  readEditability(O, F.Edit);
  readHealth(O, F.State);
  O.read("host_device", F.HostDevice);
  O.read("template", F.Template);
  O.read("calls", F.Calls);
  if (O.has("called_by")) // absent in inventories written before it existed (journals)
    O.read("called_by", F.CalledBy);
}

static void readFields(JSONObject &O, LaunchDim &D) {
  O.read("expr", D.Expr);
  D.Value.reset();
  if (const json *V = O.member("value", /*Required=*/true); V && !V->is_null())
    O.read("value", D.Value.emplace());
  O.read("via_variable", D.ViaVariable);
}

/// {"expr"} of a launch's stream.
struct StreamExpr {
  std::string Expr;
};
static void readFields(JSONObject &O, StreamExpr &S) { O.read("expr", S.Expr); }

static void readFields(JSONObject &O, LaunchSite &L) {
  O.read("id", L.ID);
  O.object("location", L.Loc);
  readEditability(O, L.Edit);
  readHealth(O, L.State);
  O.read("via", L.Via);
  O.read("kernel", L.Kernel);
  O.read("callee", L.Callee);
  O.read("function", L.Function);
  O.object("grid", L.Grid);
  O.object("block", L.Block);
  O.object("shared_memory", L.SharedMemory);
  std::optional<StreamExpr> Stream;
  O.object("stream", Stream);
  if (Stream)
    L.Stream = Stream->Expr;
  O.objects("template_args", L.TemplateArgs);
  L.ConfigFormula.reset();
  if (const json *F = O.member("config_formula", /*Required=*/false); F && !F->is_null()) {
    if (llvm::Expected<LaunchFormula> LF = launchFormulaFromJSON(*F, "formula"))
      L.ConfigFormula = std::move(*LF);
    else
      O.fail("config_formula", llvm::toString(LF.takeError()));
  }
}

static void readFields(JSONObject &O, ConstantUse &U) {
  O.read("constant", U.Constant);
  O.read("context", U.Context);
  O.read("owner", U.Owner);
  O.read("file", U.File);
  O.read("line", U.Line);
  O.read("column", U.Column);
}

static void readFields(JSONObject &O, HardwareFact &H) {
  O.read("reason", H.Reason);
  O.objects("uses", H.Uses);
}

static void readFields(JSONObject &O, Constant &C) {
  O.read("id", C.ID);
  O.object("location", C.Loc);
  readEditability(O, C.Edit);
  O.read("constant_kind", C.ConstantKind);
  O.read("name", C.Name);
  O.read("type", C.Type);
  O.read("init", C.Init);
  O.read("value", C.Value);
  O.read("command_line", C.CommandLine);
  O.read("kind", C.Kind);
  O.read("constexpr", C.IsConstexpr);
  O.read("default", C.Default);
  O.objects("uses", C.Uses);
  O.object("hardware_fact", C.Hardware);
}

/// "sides" of a translation unit.
struct Sides {
  std::string Device, Host;
};
static void readFields(JSONObject &O, Sides &S) {
  O.read("device", S.Device);
  O.read("host", S.Host);
}

static void readFields(JSONObject &O, TranslationUnit &T) {
  O.read("file", T.File);
  O.read("entry", T.Entry);
  O.read("status", T.Status);
  std::optional<Sides> S;
  O.object("sides", S);
  if (S) {
    T.DeviceSide = S->Device;
    T.HostSide = S->Host;
  }
  O.read("errors", T.Errors);
}

/// The members after "schema" and "version" (inventoryFromJSON checks those first).
static void readFields(JSONObject &O, Inventory &I) {
  O.read("root", I.Root);
  O.objects("translation_units", I.TranslationUnits);
  O.objects("kernels", I.Kernels);
  O.objects("device_functions", I.DeviceFunctions);
  O.objects("launch_sites", I.LaunchSites);
  O.objects("constants", I.Constants);
}

llvm::Expected<Inventory> inventoryFromJSON(const json &J, StringRef Source, bool Strict) {
  JSONReadErrors Errors(Source.str(), Strict);
  Inventory I;
  JSONObject O(J, "", Errors);
  O.read("schema", I.Schema);
  O.read("version", I.Version);
  if (!Errors.failed() && I.Schema != "kloop-inventory")
    Errors.fail("schema", "expected \"kloop-inventory\", not \"" + I.Schema + "\"");
  if (!Errors.failed() && I.Version != 1)
    Errors.fail("version", "version " + std::to_string(I.Version) +
                               " is not one this kloop reads (it reads version 1)");
  readFields(O, I);
  O.finish();
  if (llvm::Error E = Errors.take())
    return E;
  return I;
}

//===--- writing ----------------------------------------------------------===//

template <typename T> static json orNull(const std::optional<T> &V) { return V ? json(*V) : json(nullptr); }

/// Sets J[Key] only when \p V is set (members the writer omits unless they apply).
template <typename T> static void setIf(json &J, const char *Key, const std::optional<T> &V) {
  if (V)
    J[Key] = *V;
}

static json write(const Position &P) { return {{"line", P.Line}, {"column", P.Column}}; }
static json write(const Location &L) {
  return {{"file", L.File}, {"begin", write(L.Begin)}, {"end", write(L.End)}};
}
static void writeEditability(json &J, const Editability &E) {
  J["editable"] = E.Editable;
  setIf(J, "not_editable_reason", E.NotEditableReason);
}
static void writeHealth(json &J, const Health &H) {
  J["status"] = H.Status;
  J["errors"] = H.Errors;
}
static json write(const ExprValue &E) { return {{"expr", E.Expr}, {"value", orNull(E.Value)}}; }

static void writeSymbol(json &J, const Symbol &S) {
  J["mangled"] = S.Mangled;
  J["clang_mangled"] = S.ClangMangled;
  J["linkage"] = S.Linkage;
  J["match_key"] = S.MatchKey;
  J["nvcc_known"] = S.NvccKnown;
  setIf(J, "nvcc_unknown_reason", S.NvccUnknownReason);
}
static json write(const Symbol &S) {
  json J = json::object();
  writeSymbol(J, S);
  return J;
}
static json write(const Instantiation &I) {
  json J{{"id", I.ID}, {"template_args", I.TemplateArgs}};
  writeSymbol(J, I.Sym);
  return J;
}
static json write(const TemplateParam &T) {
  json J{{"name", T.Name}, {"kind", T.Kind}};
  setIf(J, "id", T.ID);
  setIf(J, "type", T.Type);
  if (T.Kind == "value")
    J["default"] = orNull(T.Default);
  return J;
}
static json write(const Param &P) {
  return {{"id", P.ID},          {"name", P.Name},
          {"type", P.Type},      {"pointer", P.Pointer},
          {"const_pointee", P.ConstPointee}, {"restrict", P.Restrict},
          {"written", orNull(P.Written)},    {"write_evidence", orNull(P.WriteEvidence)}};
}
static json writeRegion(const RegionBase &R) {
  json J{{"id", R.ID}, {"kind", R.Kind}, {"location", write(R.Loc)}};
  writeEditability(J, R.Edit);
  return J;
}
static json write(const Unroll &U) {
  json J{{"spelling", U.Spelling}, {"count", orNull(U.Count)}};
  setIf(J, "count_expr", U.CountExpr);
  setIf(J, "state", U.State);
  setIf(J, "line", U.Line);
  return J;
}
//===--- Elementwise loops (rules vectorize-global-access, coarsen-grid-stride) ---===//

static json write(const ElementwiseAccess &A) {
  return {{"param", A.Param},     {"root", A.Root}, {"element_type", A.ElementType}, {"element_bytes", A.ElementBytes},
          {"begin", A.Begin},     {"end", A.End},                  {"read", A.Read},
          {"written", A.Written}, {"unconditional", A.Unconditional}};
}

static json write(const Elementwise &E) {
  json J = {{"refusal", orNull(E.Refusal)}, {"var", E.Var},       {"var_type", E.VarType},
            {"init", E.Init},               {"bound", E.Bound},   {"stride", E.Stride},
            {"body", E.Body},               {"other_effects", orNull(E.OtherEffects)},
            {"stride_kind", E.StrideKind},  {"block_extent", orNull(E.BlockExtent)}};
  json A = json::array();
  for (const ElementwiseAccess &X : E.Accesses)
    A.push_back(write(X));
  J["accesses"] = A;
  json R = json::array();
  for (const ElementwiseReduction &X : E.Reductions)
    R.push_back({{"var", X.Var}, {"type", X.Type}, {"op", X.Op}, {"reassociates", X.Reassociates},
                 {"combined_in", orNull(X.CombinedIn)}, {"not_combined", orNull(X.NotCombined)},
                 {"tree_stmt", orNull(X.TreeStmt)}});
  J["reductions"] = R;
  return J;
}

static json write(const DotProduct &D) {
  json J = {{"refusal", orNull(D.Refusal)}, {"tile", D.Tile ? write(*D.Tile) : json(nullptr)},
            {"tile_param", orNull(D.TileParam)}, {"var", D.Var}, {"var_type", D.VarType}, {"init", D.Init},
            {"bound", D.Bound}, {"acc", D.Acc}, {"acc_type", D.AccType}, {"row_operand", D.RowOperand}, {"col_operand", D.ColOperand},
            {"row_type", D.RowType}, {"col_type", D.ColType}, {"row_bytes", D.RowBytes},
            {"col_bytes", D.ColBytes}};
  J["prelude"] = D.Prelude;
  J["row_terms"] = D.RowTerms;
  J["col_terms"] = D.ColTerms;
  J["after"] = D.After;
  return J;
}

static json write(const Loop &L) {
  json J = writeRegion(L);
  J["loop_kind"] = L.LoopKind;
  J["depth"] = L.Depth;
  J["parent"] = orNull(L.Parent);
  J["unroll"] = L.UnrollPragma ? write(*L.UnrollPragma) : json(nullptr);
  setIf(J, "condition", L.Condition);
  J["trip_count"] = orNull(L.TripCount);
  J["elementwise"] = L.ElementwiseFacts ? write(*L.ElementwiseFacts) : json(nullptr);
  J["dot_product"] = L.DotProductFacts ? write(*L.DotProductFacts) : json(nullptr);
  return J;
}

template <typename T> static json writeAll(const std::vector<T> &V) {
  json A = json::array();
  for (const T &X : V)
    A.push_back(write(X));
  return A;
}

static json write(const SharedArray &S) {
  json J = writeRegion(S);
  J["name"] = S.Name;
  J["type"] = S.Type;
  J["element_type"] = S.ElementType;
  J["dims"] = writeAll(S.Dims);
  J["bytes"] = orNull(S.Bytes);
  J["extern"] = S.Extern;
  J["dynamic"] = S.Dynamic;
  J["stmt"] = orNull(S.Stmt);
  J["decl_text"] = orNull(S.DeclText);
  J["escapes"] = orNull(S.Escapes);
  J["column_access"] = orNull(S.ColumnAccess);
  return J;
}
static json write(const LocalConstant &C) {
  json J = writeRegion(C);
  J["name"] = C.Name;
  J["type"] = C.Type;
  J["init"] = C.Init;
  J["constexpr"] = C.Constexpr;
  J["value"] = orNull(C.Value);
  return J;
}
static json write(const LaunchBounds &B) {
  return {{"id", B.ID},
          {"max_threads", write(B.MaxThreads)},
          {"min_blocks", B.MinBlocks ? write(*B.MinBlocks) : json(nullptr)},
          {"max_blocks_per_cluster", B.MaxBlocksPerCluster ? write(*B.MaxBlocksPerCluster) : json(nullptr)}};
}
//--- facts of the rules warp-shuffle-reductions and privatize-atomics ---//

static json write(const TreeCall &C) {
  return {{"line", C.Line}, {"stmt", orNull(C.Stmt)}, {"text", orNull(C.Text)}, {"name_offset", orNull(C.NameOffset)}};
}
static json write(const TreeReduction &T) {
  json J{{"function", T.Function}, {"line", T.Line}, {"form", orNull(T.Form)}, {"op", orNull(T.Op)}};
  J["element_type"] = orNull(T.ElementType);
  J["array"] = orNull(T.Array);
  J["thread_index"] = orNull(T.ThreadIndex);
  J["stride_var"] = orNull(T.StrideVar);
  J["thread_index_proof"] = orNull(T.ThreadIndexProof);
  J["thread_index_unproved"] = orNull(T.ThreadIndexUnproved);
  J["start"] = T.Start ? write(*T.Start) : json(nullptr);
  J["pragma"] = T.Pragma;
  J["loop_text"] = T.LoopText;
  J["cond_offset"] = T.CondOffset;
  J["cond_length"] = T.CondLength;
  J["stmt"] = orNull(T.Stmt);
  J["function_name"] = orNull(T.FunctionName);
  J["function_text"] = orNull(T.FunctionText);
  J["name_offset"] = orNull(T.NameOffset);
  J["loop_offset"] = orNull(T.LoopOffset);
  J["calls"] = writeAll(T.Calls);
  return J;
}
static json write(const AtomicSite &A) {
  return {{"line", A.Line},          {"function", A.Function},       {"index", A.Index},
          {"bound", orNull(A.Bound)}, {"result_used", A.ResultUsed}, {"base_offset", orNull(A.BaseOffset)}};
}
static json write(const AtomicTarget &A) {
  return {{"param", A.Param},
          {"name", A.Name},
          {"element_type", A.ElementType},
          {"element_bytes", orNull(A.ElementBytes)},
          {"other_use", orNull(A.OtherUse)},
          {"returns", orNull(A.Returns)},
          {"body_text", orNull(A.BodyText)},
          {"atomics", writeAll(A.Atomics)}};
}

static json write(const FloatOp &F) {
  return {{"function", F.Function}, {"line", F.Line}, {"begin", F.Begin}, {"end", F.End}, {"split", F.Split}};
}

static json write(const FloatOps &F) { return {{"body_text", orNull(F.BodyText)}, {"ops", writeAll(F.Ops)}}; }

static json write(const Index2D &I) {
  return {{"refusal", orNull(I.Refusal)}, {"x_var", I.XVar},       {"y_var", I.YVar},
          {"x_stmt", I.XStmt},            {"y_stmt", I.YStmt},     {"x_text", I.XText},
          {"y_text", I.YText},            {"x_thread", I.XThread}, {"y_thread", I.YThread},
          {"strided", orNull(I.Strided)}};
}

static json write(const Kernel &K) {
  json J{{"id", K.ID}, {"location", write(K.Loc)}};
  writeEditability(J, K.Edit);
  writeHealth(J, K.State);
  J["name"] = K.Name;
  J["qualified_name"] = K.QualifiedName;
  J["signature"] = orNull(K.Signature);
  J["static"] = K.Static;
  J["anonymous_namespace"] = K.AnonymousNamespace;
  J["explicit_specialization"] = K.ExplicitSpecialization;
  J["library"] = K.Library;
  J["mangled"] = K.Mangled;
  J["symbols"] = writeAll(K.Symbols);
  J["instantiations"] = writeAll(K.Instantiations);
  J["template_params"] = writeAll(K.TemplateParams);
  J["launch_bounds"] = K.Bounds ? write(*K.Bounds) : json(nullptr);
  J["params"] = writeAll(K.Params);
  J["loops"] = writeAll(K.Loops);
  J["shared_arrays"] = writeAll(K.SharedArrays);
  J["local_constants"] = writeAll(K.LocalConstants);
  J["calls"] = K.Calls;
  J["launch_sites"] = K.LaunchSites;
  J["tree_reductions"] = writeAll(K.TreeReductions);
  J["atomic_targets"] = writeAll(K.AtomicTargets);
  J["float_ops"] = K.FloatMath ? write(*K.FloatMath) : json(nullptr);
  J["index_2d"] = K.Index2DFacts ? write(*K.Index2DFacts) : json(nullptr);
  J["indirect_pointer"] = K.IndirectPointer ? json(*K.IndirectPointer) : json(nullptr);
  return J;
}
static json write(const DeviceFunction &F) {
  json J{{"id", F.ID}, {"name", F.Name}, {"location", write(F.Loc)}};
  writeEditability(J, F.Edit);
  writeHealth(J, F.State);
  J["host_device"] = F.HostDevice;
  J["template"] = F.Template;
  J["calls"] = F.Calls;
  J["called_by"] = F.CalledBy;
  return J;
}
static json write(const LaunchDim &D) {
  json J{{"expr", D.Expr}, {"value", nullptr}};
  if (D.Value) {
    J["value"] = json::array();
    for (const std::optional<int64_t> &C : *D.Value)
      J["value"].push_back(orNull(C));
  }
  setIf(J, "via_variable", D.ViaVariable);
  return J;
}
template <typename T> static json writeOrNull(const std::optional<T> &V) {
  return V ? write(*V) : json(nullptr);
}
static json write(const LaunchSite &L) {
  json J{{"id", L.ID}, {"location", write(L.Loc)}};
  writeEditability(J, L.Edit);
  writeHealth(J, L.State);
  J["via"] = L.Via;
  J["kernel"] = orNull(L.Kernel);
  J["callee"] = L.Callee;
  J["function"] = L.Function;
  J["grid"] = writeOrNull(L.Grid);
  J["block"] = writeOrNull(L.Block);
  J["shared_memory"] = writeOrNull(L.SharedMemory);
  J["stream"] = L.Stream ? json{{"expr", *L.Stream}} : json(nullptr);
  J["template_args"] = writeAll(L.TemplateArgs);
  if (L.ConfigFormula)
    J["config_formula"] = toJSON(*L.ConfigFormula);
  return J;
}
static json write(const ConstantUse &U) {
  json J{{"constant", U.Constant}, {"context", U.Context}, {"owner", U.Owner}};
  setIf(J, "file", U.File);
  setIf(J, "line", U.Line);
  setIf(J, "column", U.Column);
  return J;
}
static json write(const Constant &C) {
  json J{{"id", C.ID}, {"location", write(C.Loc)}};
  writeEditability(J, C.Edit);
  J["constant_kind"] = C.ConstantKind;
  J["name"] = C.Name;
  setIf(J, "type", C.Type);
  setIf(J, "init", C.Init);
  if (C.ConstantKind != "template_param") // a template parameter has no value of its own
    J["value"] = orNull(C.Value);
  setIf(J, "command_line", C.CommandLine);
  setIf(J, "kind", C.Kind);
  setIf(J, "constexpr", C.IsConstexpr);
  if (C.ConstantKind == "template_param")
    J["default"] = orNull(C.Default);
  J["uses"] = writeAll(C.Uses);
  J["hardware_fact"] = C.Hardware ? json{{"reason", C.Hardware->Reason}, {"uses", writeAll(C.Hardware->Uses)}}
                                  : json(nullptr);
  return J;
}
static json write(const TranslationUnit &T) {
  json J{{"file", T.File}, {"errors", T.Errors}};
  setIf(J, "entry", T.Entry);
  setIf(J, "status", T.Status);
  if (T.DeviceSide && T.HostSide)
    J["sides"] = {{"device", *T.DeviceSide}, {"host", *T.HostSide}};
  return J;
}

json toJSON(const Inventory &I) {
  return {{"schema", I.Schema},
          {"version", I.Version},
          {"root", I.Root},
          {"translation_units", writeAll(I.TranslationUnits)},
          {"kernels", writeAll(I.Kernels)},
          {"device_functions", writeAll(I.DeviceFunctions)},
          {"launch_sites", writeAll(I.LaunchSites)},
          {"constants", writeAll(I.Constants)}};
}

//===--- lookups ----------------------------------------------------------===//

template <typename T> static const T *byID(const std::vector<T> &V, StringRef ID) {
  for (const T &X : V)
    if (X.ID == ID)
      return &X;
  return nullptr;
}
const Kernel *Inventory::kernel(StringRef ID) const { return byID(Kernels, ID); }
const LaunchSite *Inventory::launchSite(StringRef ID) const { return byID(LaunchSites, ID); }
const Constant *Inventory::constant(StringRef ID) const { return byID(Constants, ID); }

} // namespace inv
} // namespace kloop
