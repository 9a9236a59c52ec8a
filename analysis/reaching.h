// Reaching definitions, syntactically: which assignments of a name can supply its value at
// a use. Shared by the rules that judge a variable by what was assigned to it (TG005's
// softmax variables, TG006's sigmoid variables, TG014's loss definition chain).
#pragma once

#include <string_view>
#include <vector>

#include "analysis/module_model.h"

namespace preflight::analysis {

// The values assigned to `dotted` that can reach `use` (seen from `scope`). For a local of
// `scope`: the last assignment before the use in a block enclosing it, plus any in nested
// blocks (branches, loops) after that one and still before the use. For instance state or a
// name of an enclosing scope: every assignment. A binding without a value (`x: int`,
// an unparsable right side) is passed over. Empty when a tuple unpacking binds it (the
// element is not followed) or nothing does.
std::vector<TSNode> reaching_values(const ModuleModel& model, std::string_view dotted,
                                    TSNode use, int scope);

// The same, as binding sites, tuple unpackings included: `a, b = f(x)` reaches a use of `b`
// as the site {f(x), position 1, arity 2}.
std::vector<BindingSite> reaching_sites(const ModuleModel& model, std::string_view dotted,
                                        TSNode use, int scope);

// The last plain assignment statement `name = ...` that starts before `before` inside
// `body`, not counting nested functions, classes and lambdas; null when there is none.
TSNode last_assignment(std::string_view name, TSNode body, uint32_t before, std::string_view src);

// `inner` lies within `outer` (byte ranges).
bool encloses(TSNode outer, TSNode inner);

}  // namespace preflight::analysis
