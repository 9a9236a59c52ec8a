// Every format as a stream: files handed over one at a time, each file's text gone as soon as
// the writer returns (overwritten here), must give the same bytes as the whole report. The
// line formats must have written a file's lines before the next file arrives.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <sstream>

#include "sample_report.h"
#include "server/cli/report_github.h"
#include "server/cli/report_json.h"
#include "server/cli/report_sarif.h"
#include "server/cli/report_terminal.h"

namespace preflight::server {
namespace {

using MakeWriter = std::function<std::unique_ptr<ReportWriter>(std::ostream&)>;

struct Format {
  const char* name;
  MakeWriter make;
  bool writes_as_files_arrive;
};

std::vector<Format> formats() {
  return {
      {"terminal", [](std::ostream& o) { return make_terminal_writer({}, o); }, true},
      {"github", [](std::ostream& o) { return make_github_writer(o, testing::kSampleRules); }, true},
      {"json", [](std::ostream& o) { return make_json_writer(o); }, false},
      {"sarif", [](std::ostream& o) { return make_sarif_writer(o, "9.9.9-test", testing::kSampleRules); },
       false},
  };
}

CheckReport report_with_silences() {
  CheckReport report = testing::sample_report();
  report.explain_silence = true;
  report.files.front().silences.push_back(
      {"TG003", report.files.front().findings.front().range, "a framework clears gradients", {}});
  return report;
}

TEST(ReportStream, FilesOneAtATimeGiveTheWholeReportsBytes) {
  for (const CheckReport& report : {testing::sample_report(), report_with_silences()}) {
    for (const Format& format : formats()) {
      std::ostringstream whole, streamed;
      auto whole_writer = format.make(whole);
      write_report(report, *whole_writer);

      auto writer = format.make(streamed);
      for (FileFindings file : report.files) {  // a copy, whose text dies with the loop step
        std::size_t before = streamed.str().size();
        writer->file(file);
        bool wrote = streamed.str().size() > before;
        if (!file.findings.empty()) {
          EXPECT_EQ(wrote, format.writes_as_files_arrive) << format.name << " " << file.path;
        }
        file.text.assign(file.text.size(), '#');  // a writer that kept a view would now read this
      }
      writer->finish(totals_of(report));
      EXPECT_EQ(streamed.str(), whole.str()) << format.name;
    }
  }
}

TEST(ReportStream, TotalsCountWhatTheFilesCarry) {
  CheckReport report = report_with_silences();
  ReportTotals totals = totals_of(report);
  EXPECT_EQ(totals.counts.total(), 4u);
  EXPECT_EQ(totals.fixable, 1u);
  EXPECT_EQ(totals.silences, 1u);
  EXPECT_TRUE(totals.finding_at_fail_on);
  EXPECT_TRUE(gate_fails(totals));
  EXPECT_EQ(gate_fails(totals), gate_fails(report));
}

}  // namespace
}  // namespace preflight::server
