// The JSON report (rules.md §9.6): key names and order, positions in code points with an
// exclusive end, nulls, the evidence and fix additions, failures, and non-UTF-8 safety.
#include "server/cli/report_json.h"

#include <gtest/gtest.h>

#include <sstream>

#include "test_support.h"

namespace preflight::server {
namespace {

using analysis::FixSafety;
using analysis::Severity;
using Json = nlohmann::ordered_json;
using testing::make_finding;
using testing::make_fix;

std::vector<std::string> keys_of(const Json& j) {
  std::vector<std::string> keys;
  for (auto it = j.begin(); it != j.end(); ++it) keys.push_back(it.key());
  return keys;
}

// "é" is two bytes and one column; the finding is on line 2.
const std::string kText = "import torch\nhé = [loss]\n";

CheckReport sample_report() {
  analysis::Finding leak = make_finding(
      "TG001", 20, 24,
      {make_fix("add .detach()", FixSafety::Safe, {{{24, 24}, ".detach()"}}),
       make_fix("use .item()", FixSafety::Unsafe, {{{20, 24}, "loss.item()"}})});
  leak.hint = "store loss.detach()";
  leak.evidence = {{{13, 16}, "stored in hé"}};
  analysis::Finding note = make_finding("TG004", 0, 6, {}, Severity::Note);
  note.category = analysis::Category::PerformanceWarn;

  CheckReport report;
  report.files.push_back({"pkg/train.py", kText, {note, leak}});
  report.failures.push_back({"pkg/broken.py", "syntax error: line 1:5"});
  report.files_checked = 1;
  report.fixed = 2;
  return report;
}

TEST(JsonReport, TopLevelAndSummaryShape) {
  Json j = json_report(sample_report());
  EXPECT_EQ(keys_of(j),
            (std::vector<std::string>{"version", "summary", "diagnostics", "failures"}));
  EXPECT_EQ(j["version"], 1);
  EXPECT_EQ(keys_of(j["summary"]), (std::vector<std::string>{"files_checked", "errors",
                                                              "warnings", "notes", "fixed"}));
  EXPECT_EQ(j["summary"], Json::parse(R"({"files_checked":1,"errors":1,"warnings":0,"notes":1,
                                         "fixed":2})"));
  EXPECT_EQ(j["failures"], Json::parse(R"([{"path":"pkg/broken.py",
                                           "error":"syntax error: line 1:5"}])"));
}

TEST(JsonReport, DiagnosticFieldsInOrder) {
  Json d = json_report(sample_report())["diagnostics"][1];
  EXPECT_EQ(keys_of(d), (std::vector<std::string>{"code", "message", "severity", "category",
                                                  "path", "line", "column", "end_line",
                                                  "end_column", "hint", "fixable", "fix",
                                                  "related", "fixes"}));
  EXPECT_EQ(d["code"], "TG001");
  EXPECT_EQ(d["message"], "message for TG001");
  EXPECT_EQ(d["severity"], "error");
  EXPECT_EQ(d["category"], "CRITICAL_OOM");
  EXPECT_EQ(d["path"], "pkg/train.py");
  // "hé = [" is 6 code points (7 bytes): loss starts at column 7, ends before column 11.
  EXPECT_EQ(d["line"], 2);
  EXPECT_EQ(d["column"], 7);
  EXPECT_EQ(d["end_line"], 2);
  EXPECT_EQ(d["end_column"], 11);
  EXPECT_EQ(d["hint"], "store loss.detach()");
  EXPECT_EQ(d["fixable"], true);
  EXPECT_EQ(d["fix"], "add .detach()");
}

TEST(JsonReport, EvidenceBecomesRelatedAndEveryFixIsListed) {
  Json d = json_report(sample_report())["diagnostics"][1];
  EXPECT_EQ(d["related"], Json::parse(R"([{"message":"stored in hé","line":2,"column":1,
                                           "end_line":2,"end_column":3}])"));
  EXPECT_EQ(d["fixes"], Json::parse(R"json([
    {"description":"add .detach()","safety":"safe",
     "edits":[{"line":2,"column":11,"end_line":2,"end_column":11,"new_text":".detach()"}]},
    {"description":"use .item()","safety":"unsafe",
     "edits":[{"line":2,"column":7,"end_line":2,"end_column":11,"new_text":"loss.item()"}]}
  ])json"));
  EXPECT_EQ(keys_of(d["fixes"][0]), (std::vector<std::string>{"description", "safety", "edits"}));
}

TEST(JsonReport, MissingHintAndFixAreNull) {
  Json d = json_report(sample_report())["diagnostics"][0];
  EXPECT_EQ(d["code"], "TG004");
  EXPECT_EQ(d["severity"], "note");
  EXPECT_EQ(d["category"], "PERFORMANCE_WARN");
  EXPECT_TRUE(d["hint"].is_null());
  EXPECT_TRUE(d["fix"].is_null());
  EXPECT_EQ(d["fixable"], false);
  EXPECT_EQ(d["related"], Json::array());
  EXPECT_EQ(d["fixes"], Json::array());
}

TEST(JsonReport, UnsafeOnlyFindingIsNotFixable) {
  CheckReport report;
  report.files.push_back(
      {"a.py", "x\n",
       {make_finding("TG001", 0, 1,
                     {make_fix("use .item()", FixSafety::Unsafe, {{{0, 1}, "y"}})})}});
  Json d = json_report(report)["diagnostics"][0];
  EXPECT_EQ(d["fixable"], false);
  EXPECT_TRUE(d["fix"].is_null());
  EXPECT_EQ(d["fixes"][0]["safety"], "unsafe");
}

TEST(JsonReport, EmptyRunStillHasEveryKey) {
  std::ostringstream out;
  write_json_report(CheckReport{}, out);
  EXPECT_EQ(Json::parse(out.str()), Json::parse(R"({"version":1,"summary":{"files_checked":0,
    "errors":0,"warnings":0,"notes":0,"fixed":0},"diagnostics":[],"failures":[]})"));
}

TEST(JsonReport, BytesThatAreNotUtf8AreReplacedNotFatal) {
  CheckReport report;
  analysis::Finding f = make_finding("TG001", 0, 1);
  f.message = "bad \xff byte";
  report.files.push_back({"a.py", "x\n", {f}});
  std::ostringstream out;
  write_json_report(report, out);
  Json j = Json::parse(out.str());
  EXPECT_EQ(j["diagnostics"][0]["message"], "bad \xEF\xBF\xBD byte");
}

}  // namespace
}  // namespace preflight::server
