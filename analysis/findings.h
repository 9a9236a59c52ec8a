// The diagnostic model shared by every front end (CLI, language server): a finding, its
// evidence chain and its fixes, all in byte offsets into the analysed text.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace preflight::analysis {

// Half-open byte range [begin, end) into the source text.
struct ByteRange {
  uint32_t begin = 0;
  uint32_t end = 0;
  friend bool operator==(const ByteRange&, const ByteRange&) = default;
};

enum class Severity { Note, Warning, Error };
enum class Category { CriticalOom, ConvergenceBug, PerformanceWarn };

std::string_view severity_name(Severity s);   // "error" | "warning" | "note"
std::string_view category_name(Category c);   // "CRITICAL_OOM" | ...

// One step of the reasoning behind a finding, anchored where that fact was read.
struct EvidenceStep {
  ByteRange range;
  std::string message;
};

struct TextEdit {
  ByteRange range;          // bytes replaced (empty range = insertion)
  std::string replacement;  // new bytes
};

// How much a fix may be trusted. Safe: cannot change what the program computes; applied by
// `--fix`. Unsafe: a correct rewrite that changes types or semantics in ways the author must
// confirm (offered in the editor, never applied by `--fix`). DisplayOnly: shown, not applicable.
enum class FixSafety { Safe, Unsafe, DisplayOnly };
std::string_view fix_safety_name(FixSafety s);

struct Fix {
  std::string description;  // "add .detach()"
  FixSafety safety = FixSafety::Safe;
  std::vector<TextEdit> edits;  // non-overlapping, sorted by range.begin
};

struct Finding {
  std::string code;  // "TG001"
  Severity severity = Severity::Error;
  Category category = Category::CriticalOom;
  ByteRange range;  // the anchor node
  std::string message;
  std::string hint;
  std::vector<EvidenceStep> evidence;
  std::vector<Fix> fixes;  // preferred first; at most one Safe fix is applied by --fix

  const Fix* safe_fix() const;
};

// A rule that saw its pattern and deliberately reported nothing: a framework does the work
// here (Lightning's Trainer clears gradients, Accelerate scales for accumulation), or the
// part that decides cannot be seen (a `**kwargs` that may carry the sampler). Not a finding:
// shown on request (`check --explain-silence`), so a quiet rule can be understood.
struct Silence {
  std::string code;    // the rule that stayed quiet ("TG003")
  ByteRange range;     // where its finding would have been anchored
  std::string reason;  // one sentence: why nothing is reported
  std::vector<EvidenceStep> evidence;  // what showed it: the base class, the binding, the call
};

// A file-wide fact some findings depend on without naming it: the CUDA evidence TG004 cites,
// the framework that keeps TG012 quiet, TG008's first unseeded draw. The engine collects
// them so the incremental check can tell whether an edit changed one (rules/incremental.h).
// `range` is where the fact was read (empty for a fact with no single place).
struct ContextFact {
  std::string what;
  ByteRange range;
  bool placed = true;  // false: a fact of the whole file, with no range
  friend bool operator==(const ContextFact&, const ContextFact&) = default;
};

}  // namespace preflight::analysis
