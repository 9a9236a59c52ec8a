// One hand-made report that exercises every output format: multi-byte and astral characters
// before a span (code points and UTF-16 units differ), evidence, safe and unsafe fixes, a
// multi-line span, the characters annotations must escape, a PF100 finding, a path that
// needs percent-encoding in a URI, and a failure.
#pragma once

#include <string>

#include "server/cli/check_report.h"
#include "server/cli/rule_catalogue.h"
#include "test_support.h"

namespace preflight::server::testing {

inline analysis::ByteRange range_of(const std::string& text, std::string_view needle,
                                    std::size_t from = 0) {
  std::size_t at = text.find(needle, from);
  return {static_cast<uint32_t>(at), static_cast<uint32_t>(at + needle.size())};
}

inline const std::string kSampleText =
    "import torch\n"
    "s = \"\U0001F680\u00e9\"; history.append(loss)  # noqa: TG003\n"
    "for x in loader:\n"
    "    total += step(\n"
    "        x)\n";

inline FileFindings sample_train_file() {
  const std::string& t = kSampleText;
  analysis::Finding leak = make_finding(
      "TG001", 0, 0,
      {make_fix("add .detach()", analysis::FixSafety::Safe,
                {{{range_of(t, "loss)").begin + 4, range_of(t, "loss)").begin + 4}, ".detach()"}}),
       make_fix("store a Python number with .item()", analysis::FixSafety::Unsafe,
                {{range_of(t, "loss"), "loss.item()"}})});
  leak.range = range_of(t, "loss");
  leak.message = "`history.append(...)` keeps `loss` with its autograd graph";
  leak.hint = "Store `loss.item()` if only the number matters.";
  leak.evidence = {{range_of(t, "history"), "`history` outlives every iteration"},
                   {range_of(t, "loss"), "`loss` holds a graph-carrying value"}};

  analysis::Finding sync = make_finding("TG007", 0, 0, {}, analysis::Severity::Warning);
  sync.category = analysis::Category::PerformanceWarn;
  sync.range = {range_of(t, "step(").begin, range_of(t, "x)").end};
  sync.message = "100% of steps wait, really: twice,\nper batch";
  sync.hint = "Move it out: a, b.";

  analysis::Finding unused =
      unused_suppression_finding(t, {range_of(t, "# noqa: TG003"), "TG003"});

  std::vector<analysis::Finding> findings = {leak, unused, sync};
  sort_findings(findings);
  return {"pkg/train.py", t, findings, analysis::Severity::Error};
}

inline FileFindings sample_encoded_file() {
  std::string text = "x = 1\nloader = DataLoader(ds)\n";
  analysis::Finding note = make_finding("TG004", 0, 0, {}, analysis::Severity::Note);
  note.category = analysis::Category::PerformanceWarn;
  note.range = range_of(text, "DataLoader(ds)");
  note.message = "DataLoader without pin_memory";
  return {"data dir/l\u00e4der,v1.py", text, {note}, analysis::Severity::Error};
}

// A fixed rule list for the goldens, so they do not change when the registry's texts do.
inline const RuleInfo kSampleRules[] = {
    {"TG001", "graph-retention", analysis::Severity::Error, "CRITICAL_OOM",
     "tensor kept with its graph", "Why: graphs pile up.\nFix: detach.\n", rules::FixPolicy::SafeWhenProven},
    {"TG004", "dataloader-starvation", analysis::Severity::Note, "PERFORMANCE_WARN",
     "DataLoader settings, slow: a, b", "", rules::FixPolicy::UnsafeOnly},
    {"TG007", "device-sync-in-inner-loop", analysis::Severity::Warning, "PERFORMANCE_WARN",
     "GPU sync in an inner loop", "Why: each sync waits.\n", rules::FixPolicy::None},
    {"PF100", "unused-suppression", analysis::Severity::Warning, "SUPPRESSION",
     "suppression comment that silences nothing", "Delete it.\n", rules::FixPolicy::None},
};

inline CheckReport sample_report() {
  CheckReport report;
  report.files = {sample_encoded_file(), sample_train_file()};
  report.failures = {{"pkg/broken.py", "syntax error: line 1:5"}};
  report.files_checked = 2;
  return report;
}

}  // namespace preflight::server::testing
