// The project: what the other files of a run (the CLI's checked files, the server's
// workspace folder) say about the routines of the file being checked. One file cannot show
// whether an `eval_loss()` it defines is only ever called under no_grad by a trainer in
// another file, or called at all; the readings of real repositories kept finding exactly
// that (docs/real-code-precision.md, rounds 56-62: most wrong TG002 findings).
//
// Each file is summarised by a syntactic walk (summarize_calls: every call's last name, and
// how autograd stands where it runs), and the summaries are joined in a ProjectIndex, an
// immutable value the front ends build and hand to the pure core through CheckOptions. A
// call is matched to a routine by its last name only (`trainer.model.eval_loss(x)` to any
// `eval_loss`): a naming step, so the index may only lower a finding (a silence, a note),
// never raise one. A file's own entry is never read while checking it: its live text is
// analysed by bindings, and a stale copy on disk cannot disagree with it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "analysis/syntax.h"

namespace preflight::analysis {

// How autograd stands where a call runs, read from the code around it.
enum class CallSite : uint8_t {
  NoGrad,    // inside `with torch.no_grad()` / inference_mode, or a routine decorated so
  Module,    // module or class level code, autograd on
  Routine,   // inside a routine (`enclosing`): its own callers decide
  Unknown,   // inside a lambda, or a routine a decorator hands to someone else
};

struct ProjectCall {
  std::string name;       // the callee's last name
  CallSite site = CallSite::Unknown;
  std::string enclosing;  // Routine: the enclosing routine's name
  uint32_t line = 0;      // 1-based
  // `f(x)` with a `def f` / `class f` at this file's top level, or `self.f(x)` with a method
  // `f` in this file: the file's own routine, never another file's of the same name.
  bool local = false;
};

struct FileCalls {
  std::string path;
  std::vector<ProjectCall> calls;
  // Names that leave as values (`map(self.infer, xs)`, `fn = infer`, `getattr(m, "infer")`):
  // whoever receives them may call them anywhere.
  std::vector<std::pair<std::string, uint32_t>> escapes;
  // Calls that seed a generator anywhere in the file: a mask of kSeedsTorch / kSeedsNumpy /
  // kSeedsRandom (a seed-everything helper by its name: all three) and the line.
  std::vector<std::pair<uint8_t, uint32_t>> seeds;
  bool parsed = true;     // false: the text was not analysable (its calls are unknown)
};

inline constexpr uint8_t kSeedsTorch = 1, kSeedsNumpy = 2, kSeedsRandom = 4;

// The syntactic summary of one file's text. Pure; a text with a NUL
// byte gives `parsed = false`.
FileCalls summarize_calls(std::string_view text, std::string path);
// The same over a tree of parse_view(text) (the engine's own parse).
FileCalls summarize_calls(std::string_view text, TSNode root, std::string path);

// What the other files say about the calls of one routine name.
struct ProjectCallers {
  enum class Kind {
    NoCall,  // no other file calls it, or lets it leave as a value
    NoGrad,  // every call in the other files runs under no_grad (through up to four callers)
    Other,   // some call runs with autograd on, or where it runs cannot be told
  };
  Kind kind = Kind::Other;
  std::vector<std::string> no_grad_calls;  // NoGrad: "path:line" of the calls (at most 4)
  std::string why;                          // Other: the first call that decided it
};

class ProjectIndex {
 public:
  explicit ProjectIndex(std::vector<FileCalls> files);
  // Summaries shared with whoever keeps them between rebuilds (the server, per saved file).
  explicit ProjectIndex(std::vector<std::shared_ptr<const FileCalls>> files);

  size_t file_count() const { return files_.size(); }
  // Whether the index holds files other than `path` (otherwise it says nothing).
  bool has_other_files(std::string_view path) const;
  // How the calls named `name` in the files other than `except_path` run. A routine they run
  // from is followed by its own name, up to four callers deep; an unsummarised file among the
  // others makes NoCall impossible (Other). Thread-safe (const, no caches).
  ProjectCallers callers(std::string_view name, std::string_view except_path) const;
  // Where the files other than `except_path` seed each generator (`generator`: one of the
  // kSeeds* bits): "path:line" of the first such call, or empty.
  std::string seeded_elsewhere(uint8_t generator, std::string_view except_path) const;

 private:
  struct Entry {
    uint32_t file;
    uint32_t call;
  };
  // `home`: the file defining the routine, where calls bound to its own definitions count.
  ProjectCallers resolve(std::string_view name, uint32_t home, uint32_t except, int depth,
                         std::vector<std::string>& visiting) const;
  std::string where(uint32_t file_index, uint32_t line) const;

  void build();
  const FileCalls& summary(uint32_t f) const { return *files_[f]; }

  std::vector<std::shared_ptr<const FileCalls>> files_;
  std::unordered_map<std::string, std::vector<Entry>> calls_by_name_;
  std::unordered_map<std::string, std::vector<std::pair<uint32_t, uint32_t>>> escapes_by_name_;
  std::unordered_map<std::string, uint32_t> file_of_path_;
  std::vector<uint32_t> unparsed_;
};

}  // namespace preflight::analysis
