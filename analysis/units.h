// Analysis units and the names that connect them: what lets the language server re-analyse
// only the part of a file an edit can reach (rules/incremental.h).
//
// A unit is a run of top-level statements that share a line (so a trailing `# noqa` stays
// with its statement). A top-level class whose body starts on a line of its own is split
// (issue 24): its header (decorators, name, bases, up to the colon) is one unit, and each run
// of body statements sharing a line is a unit of its own, a method (a run holding a def) or
// class code (anything else: docstrings, class attributes, comments). The members of a class
// follow its header in the list. Class code and the header are analysed whenever any part of
// the class is (a class body is one scope, and a class with an empty body does not parse),
// and an edit to either re-analyses the whole class; a method is analysed on its own with
// what it reads. Every member also defines the class name: a reader of the class (`Trainer(...)`,
// a base class) reads all of it, as when the class was one unit. Each unit records the names it mentions (`uses`: every identifier)
// and the names through which other units can see it (`defines`):
//   - module code (anything but a def or a class): every name it mentions, since a
//     module-level statement may bind, rebind, mutate or consume any of them;
//   - a def or a class: the name of every function and class it defines (at any depth: local
//     calls resolve by name, `self.step()` to any method named `step`), names it declares
//     `global`, and names it imports (the import table is file-wide);
// and, in a separate namespace, the attributes it writes or reads through `self` (instance
// state is keyed file-wide, and `obj.attr(...)` is resolved through any class's `self.attr`).
// Unit A reads unit B when A uses a name B defines, or names an attribute (of any object)
// that B keeps on `self`. A unit also names, as attributes, the functions it defines: what a
// method returns flows into `self.<method>` (analysis/reachability.h), so the method reads
// every unit that mentions `self.<method>`. Whatever can flow from one unit to
// another without a name — the file-wide facts some rules collect (the file targets CUDA, a
// framework is in use, the first unseeded draw) — is not modelled here: the engine reports
// those as context facts and the incremental check compares them (rules/engine.h). Only
// imports are pinned into every slice (the module model's unplaced answers read them all). A
// `.backward()` call is not: a slice that misses the one a fact rests on finds another fact
// (or none) and takes the whole file, so pinning it bought no soundness, and it put every
// training loop of a script into every slice.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/findings.h"
#include "analysis/syntax.h"

namespace preflight::analysis {

// Where a unit sits: at the top level, or in a split class (header, a method, class code).
enum class UnitRole : uint8_t { TopLevel, ClassHeader, Method, ClassCode };

struct UnitFacts {
  ByteRange range;                   // first statement's start to last statement's end
  TSPoint start{};                   // the point of range.begin
  UnitRole role = UnitRole::TopLevel;
  bool module_code = false;          // holds a statement that is not a def or a class (class
                                     // code too: it runs at import, as the module's does)
  bool pinned = false;               // an import: feeds the module model's file-wide answers
  std::vector<std::string> defines;     // sorted, unique
  std::vector<std::string> uses;        // sorted, unique: free names and `self.<name>`
  std::vector<std::string> attributes;  // sorted, unique: `self.<name>` anywhere in the unit
  std::vector<std::string> attribute_uses;  // sorted, unique: `<anything>.<name>`
  size_t nodes = 0;                  // syntax nodes, named or not (the engine's size guard)
  uint32_t depth = 0;                // deepest level below the module node (its depth guard)
};

// The units of a parsed module, in source order: the byte ranges of the groups of top-level
// children (named or not) whose line spans touch, and the point each starts at; a split
// class as its header and its members (header comment).
struct UnitSpan {
  ByteRange range;
  TSPoint start;
  UnitRole role = UnitRole::TopLevel;
};
std::vector<UnitSpan> unit_spans(TSNode root);

// The facts of the units `wanted` marks (units = unit_ranges(root)), in one pass over the
// module's children; the other entries stay empty. `src` is the text.
std::vector<UnitFacts> unit_facts(TSNode root, const std::vector<UnitSpan>& units,
                                  const std::vector<bool>& wanted, std::string_view src);

// True when some name of `names` is in `sorted` (both sorted).
bool shares_name(const std::vector<std::string>& names, const std::vector<std::string>& sorted);

// True when `reader` may read something `writer` defines (the names or the attributes).
bool reads(const UnitFacts& reader, const UnitFacts& writer);

// True for the members of a split class (they follow its header).
inline bool is_member(UnitRole r) { return r == UnitRole::Method || r == UnitRole::ClassCode; }
// For each unit, the index of the header of its class (itself for a header), or -1.
std::vector<int> class_headers(const std::vector<UnitFacts>& units);

}  // namespace preflight::analysis
