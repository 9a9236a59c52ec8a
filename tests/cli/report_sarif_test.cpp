// The SARIF report (rules.md §9.8, extended): the golden file, the driver's rule list against
// the catalogue, UTF-16 columns, related locations, fixes as artifact changes, URIs, and the
// invocation record. Schema validation runs separately (cli_sarif_schema, in node).
#include "server/cli/report_sarif.h"

#include <gtest/gtest.h>

#include <sstream>

#include "golden.h"
#include "server/cli/rule_catalogue.h"
#include "sample_report.h"

namespace preflight::server {
namespace {

using Json = nlohmann::ordered_json;

Json sample_sarif() {
  return sarif_report(testing::sample_report(), "9.9.9-test", testing::kSampleRules);
}

const Json& result_with(const Json& results, std::string_view code) {
  for (const Json& r : results)
    if (r["ruleId"] == code) return r;
  static const Json none;
  ADD_FAILURE() << "no result for " << code;
  return none;
}

TEST(SarifReport, MatchesGolden) {
  std::ostringstream out;
  write_sarif_report(testing::sample_report(), "9.9.9-test", out, testing::kSampleRules);
  testing::expect_golden("sample.sarif", out.str());
}

TEST(SarifReport, OneRunWithEveryCatalogueRuleInOrder) {
  Json j = sarif_report(testing::sample_report(), "9.9.9-test");
  EXPECT_EQ(j["version"], "2.1.0");
  EXPECT_EQ(j["$schema"], kSarifSchemaUri);
  ASSERT_EQ(j["runs"].size(), 1u);
  const Json& run = j["runs"][0];
  EXPECT_EQ(run["columnKind"], "utf16CodeUnits");
  const Json& driver = run["tool"]["driver"];
  EXPECT_EQ(driver["name"], "preflight");
  EXPECT_EQ(driver["version"], "9.9.9-test");
  // No public home is configured in a default build: no link is invented.
  EXPECT_FALSE(driver.contains("informationUri"));
  ASSERT_EQ(driver["rules"].size(), rule_catalogue().size());
  for (std::size_t i = 0; i < rule_catalogue().size(); ++i) {
    const RuleInfo& info = rule_catalogue()[i];
    const Json& rule = driver["rules"][i];
    EXPECT_EQ(rule["id"], info.code);
    EXPECT_EQ(rule["name"], info.slug);
    EXPECT_EQ(rule["shortDescription"]["text"], info.summary);
    EXPECT_EQ(rule["fullDescription"]["text"],
              info.explanation.empty() ? info.summary : info.explanation);
    EXPECT_FALSE(rule.contains("helpUri"));
    EXPECT_EQ(rule["defaultConfiguration"]["level"],
              analysis::severity_name(info.default_severity));
    EXPECT_EQ(rule["properties"]["category"], info.category);
    EXPECT_EQ(rule["properties"]["tags"], Json::array({info.category}));
  }
  EXPECT_EQ(driver["rules"].back()["id"], "PF100");
  EXPECT_EQ(kInformationUri, "");
  EXPECT_EQ(rule_help_uri("TG001"), "");
}

TEST(SarifReport, RegionsCountUtf16UnitsWithAnExclusiveEnd) {
  Json sarif = sample_sarif();
  const Json& leak = result_with(sarif["runs"][0]["results"], "TG001");
  // `s = "🚀é"; history.append(` is 25 code points but 26 UTF-16 units (the rocket is two).
  EXPECT_EQ(leak["locations"][0]["physicalLocation"]["region"],
            Json::parse(R"({"startLine":2,"startColumn":27,"endLine":2,"endColumn":31})"));
  EXPECT_EQ(leak["level"], "error");
  EXPECT_EQ(leak["message"]["text"], "`history.append(...)` keeps `loss` with its autograd graph");
  EXPECT_EQ(leak["ruleIndex"], 0);
  EXPECT_EQ(leak["properties"]["hint"], "Store `loss.item()` if only the number matters.");
}

TEST(SarifReport, EvidenceBecomesRelatedLocationsWithIds) {
  Json sarif = sample_sarif();
  const Json& leak = result_with(sarif["runs"][0]["results"], "TG001");
  ASSERT_EQ(leak["relatedLocations"].size(), 2u);
  EXPECT_EQ(leak["relatedLocations"][0]["id"], 0);
  EXPECT_EQ(leak["relatedLocations"][0]["message"]["text"], "`history` outlives every iteration");
  EXPECT_EQ(leak["relatedLocations"][0]["physicalLocation"]["region"]["startColumn"], 12);
  EXPECT_EQ(leak["relatedLocations"][1]["id"], 1);
}

TEST(SarifReport, EveryFixIsAnArtifactChange) {
  Json sarif = sample_sarif();
  const Json& leak = result_with(sarif["runs"][0]["results"], "TG001");
  ASSERT_EQ(leak["fixes"].size(), 2u);
  const Json& detach = leak["fixes"][0];
  EXPECT_EQ(detach["description"]["text"], "add .detach()");
  EXPECT_EQ(detach["properties"]["safety"], "safe");
  const Json& change = detach["artifactChanges"][0];
  EXPECT_EQ(change["artifactLocation"]["uri"], "pkg/train.py");
  // An insertion: an empty deleted region just after `loss`.
  EXPECT_EQ(change["replacements"][0]["deletedRegion"],
            Json::parse(R"({"startLine":2,"startColumn":31,"endLine":2,"endColumn":31})"));
  EXPECT_EQ(change["replacements"][0]["insertedContent"]["text"], ".detach()");
  EXPECT_EQ(leak["fixes"][1]["properties"]["safety"], "unsafe");
}

TEST(SarifReport, Pf100AndMultiLineSpans) {
  Json sarif = sample_sarif();
  const Json& results = sarif["runs"][0]["results"];
  const Json& unused = result_with(results, "PF100");
  EXPECT_EQ(unused["level"], "warning");
  EXPECT_EQ(unused["ruleIndex"], 3);
  EXPECT_EQ(unused["properties"]["category"], "SUPPRESSION");
  EXPECT_EQ(unused["message"]["text"],
            "unused suppression: `# noqa: TG003` silences no TG003 finding");
  const Json& sync = result_with(results, "TG007");
  EXPECT_EQ(sync["locations"][0]["physicalLocation"]["region"],
            Json::parse(R"({"startLine":4,"startColumn":14,"endLine":5,"endColumn":11})"));
  EXPECT_FALSE(sync.contains("fixes"));
  EXPECT_FALSE(sync.contains("relatedLocations"));
}

TEST(SarifReport, FailuresAreNotificationsOfAnUnsuccessfulInvocation) {
  Json sarif = sample_sarif();
  const Json& inv = sarif["runs"][0]["invocations"][0];
  EXPECT_EQ(inv["executionSuccessful"], false);
  EXPECT_EQ(inv["toolExecutionNotifications"],
            Json::parse(R"([{"level":"error","message":{"text":"syntax error: line 1:5"},
              "locations":[{"physicalLocation":{"artifactLocation":{"uri":"pkg/broken.py"}}}]}])"));

  CheckReport clean;
  Json run = sarif_report(clean, "1", testing::kSampleRules)["runs"][0];
  EXPECT_EQ(run["invocations"][0], Json::parse(R"({"executionSuccessful":true})"));
  EXPECT_EQ(run["results"], Json::array());
}

TEST(SarifReport, RuleIndexPointsIntoTheDefaultCatalogue) {
  Json j = sarif_report(testing::sample_report(), "1");
  for (const Json& r : j["runs"][0]["results"])
    EXPECT_EQ(j["runs"][0]["tool"]["driver"]["rules"][r["ruleIndex"].get<std::size_t>()]["id"],
              r["ruleId"]);
}

TEST(SarifReport, ArtifactUrisArePercentEncodedAndAbsolutePathsAreFileUris) {
  EXPECT_EQ(artifact_uri("pkg/train.py"), "pkg/train.py");
  EXPECT_EQ(artifact_uri("data dir/l\u00e4der,v1.py"), "data%20dir/l%C3%A4der%2Cv1.py");
  EXPECT_EQ(artifact_uri("/abs/x#1.py"), "file:///abs/x%231.py");
  EXPECT_EQ(artifact_uri("a%b.py"), "a%25b.py");
}

}  // namespace
}  // namespace preflight::server
