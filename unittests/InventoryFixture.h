//===- InventoryFixture.h - Typed inventories from the members a test names -===//
//
// Tests of the stages that read an inventory (the builtin search, the workload
// scope, prompt building, the profile's kernel matching) write only the members
// they are about. completeInventory fills every other member the inventory's
// reader requires (kloop/Inventory/Model.h) with a neutral value (editable, status
// "ok", empty lists, null) and reads the result with inv::inventoryFromJSON, so a
// test inventory is still checked by the one reader kloop uses.
//
//===----------------------------------------------------------------------===//
#ifndef KLOOP_UNITTESTS_INVENTORYFIXTURE_H
#define KLOOP_UNITTESTS_INVENTORYFIXTURE_H

#include "kloop/Inventory/Model.h"
#include "nlohmann/json.hpp"
#include "llvm/Support/Error.h"

namespace kloop {
namespace test {

/// \p Given over \p Defaults: Given's members win.
inline nlohmann::json withDefaults(const nlohmann::json &Given, nlohmann::json Defaults) {
  if (Given.is_object())
    for (const auto &[K, V] : Given.items())
      Defaults[K] = V;
  return Given.is_object() ? Defaults : Given;
}

/// Every element of array member \p Key of \p Obj completed by \p Complete.
template <typename F> void completeEach(nlohmann::json &Obj, const char *Key, F Complete) {
  if (Obj.contains(Key) && Obj[Key].is_array())
    for (nlohmann::json &E : Obj[Key])
      E = Complete(E);
}

inline nlohmann::json located(const nlohmann::json &E) {
  nlohmann::json Pos = {{"line", 1}, {"column", 1}};
  nlohmann::json Loc = {{"file", "t.cu"}, {"begin", Pos}, {"end", Pos}};
  nlohmann::json Out = withDefaults(E, {{"location", Loc}, {"editable", true}});
  Out["location"] = withDefaults(Out["location"], Loc);
  for (const char *End : {"begin", "end"})
    Out["location"][End] = withDefaults(Out["location"][End], Pos);
  return Out;
}

inline nlohmann::json healthy(const nlohmann::json &E) {
  return withDefaults(located(E), {{"status", "ok"}, {"errors", nlohmann::json::array()}});
}

inline nlohmann::json symbol(const nlohmann::json &S) {
  return withDefaults(S, {{"mangled", ""}, {"clang_mangled", ""}, {"linkage", "external"},
                          {"match_key", ""}, {"nvcc_known", true}});
}

inline nlohmann::json completeKernel(const nlohmann::json &Given) {
  nlohmann::json A = nlohmann::json::array();
  nlohmann::json K = withDefaults(healthy(Given), {{"name", ""}, {"qualified_name", Given.value("id", "")},
      {"signature", nullptr}, {"static", false}, {"anonymous_namespace", false},
      {"explicit_specialization", false}, {"library", false}, {"mangled", A}, {"symbols", A},
      {"instantiations", A}, {"template_params", A}, {"launch_bounds", nullptr}, {"params", A},
      {"loops", A}, {"shared_arrays", A}, {"local_constants", A}, {"calls", A}, {"launch_sites", A}});
  completeEach(K, "symbols", symbol);
  completeEach(K, "instantiations", [](const nlohmann::json &I) {
    return symbol(withDefaults(I, {{"id", ""}, {"template_args", ""}}));
  });
  completeEach(K, "params", [](const nlohmann::json &P) {
    return withDefaults(P, {{"id", ""}, {"name", ""}, {"type", ""}, {"pointer", false},
                            {"const_pointee", false}, {"restrict", false}});
  });
  completeEach(K, "loops", [](const nlohmann::json &L) {
    nlohmann::json Out = withDefaults(located(L), {{"id", ""}, {"kind", "loop"}, {"loop_kind", "for"}, {"depth", 0}});
    if (Out.contains("unroll") && Out["unroll"].is_object())
      Out["unroll"] = withDefaults(Out["unroll"], {{"spelling", "unroll"}});
    return Out;
  });
  if (K["launch_bounds"].is_object())
    K["launch_bounds"] = withDefaults(K["launch_bounds"], {{"id", K["id"].get<std::string>() + "/launch_bounds"}});
  return K;
}

inline nlohmann::json completeConstant(const nlohmann::json &Given) {
  nlohmann::json C = withDefaults(located(Given), {{"constant_kind", "macro"}, {"name", ""},
                                                   {"uses", nlohmann::json::array()}, {"hardware_fact", nullptr}});
  completeEach(C, "uses", [&](const nlohmann::json &U) {
    return withDefaults(U, {{"constant", C.value("id", "")}, {"context", ""}, {"owner", ""}});
  });
  return C;
}

/// \p Given (a JSON inventory naming only some members) completed and read as the typed
/// inventory; an error when a member it does give has the wrong type.
inline llvm::Expected<inv::Inventory> readInventory(const nlohmann::json &Given) {
  nlohmann::json A = nlohmann::json::array();
  nlohmann::json I = withDefaults(Given, {{"schema", "kloop-inventory"}, {"version", 1}, {"root", ""},
                                          {"translation_units", A}, {"kernels", A}, {"device_functions", A},
                                          {"launch_sites", A}, {"constants", A}});
  completeEach(I, "kernels", completeKernel);
  completeEach(I, "constants", completeConstant);
  completeEach(I, "device_functions", [](const nlohmann::json &F) {
    return withDefaults(healthy(F), {{"name", ""}, {"host_device", false}, {"template", false},
                                     {"calls", nlohmann::json::array()}});
  });
  completeEach(I, "launch_sites", [](const nlohmann::json &L) {
    return withDefaults(healthy(L), {{"via", "<<<>>>"}, {"kernel", nullptr}, {"callee", ""}, {"function", ""},
                                     {"grid", nullptr}, {"block", nullptr}, {"shared_memory", nullptr},
                                     {"stream", nullptr}, {"template_args", nlohmann::json::array()}});
  });
  return inv::inventoryFromJSON(I, "test inventory");
}

/// readInventory for inventories a test knows to be well-formed.
inline inv::Inventory completeInventory(const nlohmann::json &Given) { return llvm::cantFail(readInventory(Given)); }

} // namespace test
} // namespace kloop

#endif
