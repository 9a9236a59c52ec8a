// Interrupting an analysis part-way: the front end's time budget ran out, or the work was
// cancelled (a newer version of the document arrived). The core never reads a clock or
// shares state with another thread: the front end passes the predicates, and the core polls
// them at unit boundaries — during the parse (tree-sitter's progress callback, every hundred
// parser operations), before each function or module body the provenance interprets,
// before each top-level statement the rules' walk visits, before each rule reports. No unit
// is interrupted half-way, so nothing partial ever escapes; the caller gets either a whole
// result or the reason there is none.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>

namespace preflight::analysis {

enum class InterruptReason { OutOfTime, Cancelled };

// Thrown by Interrupt::poll; check_parsed turns it into a result (out of time) or passes it
// on to its caller (cancelled).
struct AnalysisInterrupted {
  InterruptReason reason;
};

class Interrupt {
 public:
  Interrupt() = default;  // never interrupts
  // `budget` says what ran out, for the user ("10 s").
  Interrupt(std::function<bool()> out_of_time, std::string budget, std::function<bool()> cancelled)
      : out_of_time_(std::move(out_of_time)), budget_(std::move(budget)), cancelled_(std::move(cancelled)) {}

  const std::string& budget() const { return budget_; }

  // Throws AnalysisInterrupted when either predicate says stop (cancellation first: a
  // cancelled analysis has no reader to tell it ran out of time).
  void poll() const {
    if (auto reason = stop_reason()) throw AnalysisInterrupted{*reason};
  }

  // The same question without throwing (for a C callback: the parser's progress check).
  std::optional<InterruptReason> stop_reason() const {
    if (cancelled_ && cancelled_()) return InterruptReason::Cancelled;
    if (out_of_time_ && out_of_time_()) return InterruptReason::OutOfTime;
    return std::nullopt;
  }

 private:
  std::function<bool()> out_of_time_;
  std::string budget_;
  std::function<bool()> cancelled_;
};

}  // namespace preflight::analysis
