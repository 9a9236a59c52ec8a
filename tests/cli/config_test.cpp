// Configuration files (rules.md §6): every key, every file name, the order within a
// directory and the walk up, pyproject tables, warnings and errors with their positions.
// How the settings reach a run (precedence, gating) is in config_run_test.cpp.
#include "server/cli/config.h"

#include <gtest/gtest.h>

#include "test_support.h"

namespace preflight::server {
namespace {

using analysis::Severity;
using testing::TempDir;
namespace fs = std::filesystem;

ConfigResult load(const fs::path& file) {
  return load_config(config_location_for(file), file.filename().string());
}

TEST(Config, WholeFileReadsEveryKey) {
  TempDir dir;
  fs::path file = dir.write(".preflight.toml", R"(select = ["tg001", "TG002"]
ignore = ["tg004"]
exclude = ["third_party", "notebooks/*.py"]
fail_on = "Warning"
target_gpu = "a100-80gb"
respect_gitignore = false

[severity]
tg001 = "note"
TG008 = "ERROR"
PF100 = "error"
)");
  ConfigResult r = load(file);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_TRUE(r.warnings.empty());
  const Config& c = r.config;
  EXPECT_EQ(c.file, file);
  EXPECT_EQ(c.dir, dir.path());
  EXPECT_EQ(c.select, (std::vector<std::string>{"TG001", "TG002"}));
  EXPECT_EQ(c.ignore, (std::vector<std::string>{"TG004"}));
  EXPECT_EQ(c.exclude, (std::vector<std::string>{"third_party", "notebooks/*.py"}));
  EXPECT_EQ(c.fail_on, Severity::Warning);
  EXPECT_EQ(c.target_gpu, "a100-80gb");
  EXPECT_EQ(c.respect_gitignore, false);
  EXPECT_EQ(c.severity, (std::map<std::string, Severity>{
                            {"TG001", Severity::Note}, {"TG008", Severity::Error},
                            {"PF100", Severity::Error}}));
}

TEST(Config, EmptyFileIsAllDefaults) {
  TempDir dir;
  ConfigResult r = load(dir.write("torch-preflight.toml", "# nothing\n"));
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r.config.select.empty());
  EXPECT_FALSE(r.config.fail_on);
  EXPECT_FALSE(r.config.target_gpu);
  EXPECT_TRUE(r.config.severity.empty());
}

TEST(Config, UnknownKeysAndUnknownCodesWarnWithTheirPosition) {
  TempDir dir;
  ConfigResult r = load(dir.write(".preflight.toml",
                                  "select = [\"TG001\", \"tg999\"]\n"
                                  "ignore = [\"E501\"]\n"
                                  "  colour = true\n"));
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.warnings, (std::vector<std::string>{
                            ".preflight.toml:1:20: warning: unknown rule code 'TG999' in select",
                            ".preflight.toml:2:11: warning: unknown rule code 'E501' in ignore",
                            ".preflight.toml:3:3: warning: unknown configuration key 'colour' "
                            "(ignored)"}));
  EXPECT_EQ(r.config.select, (std::vector<std::string>{"TG001", "TG999"}));
}

struct BadValue {
  const char* text;
  const char* error;
};

TEST(Config, BadValuesAreErrorsNamingFileLineAndColumn) {
  const BadValue cases[] = {
      {"select = \"TG001\"\n", "x.toml:1:10: error: select must be a list of rule codes"},
      {"ignore = [\"TG001\", 3]\n", "x.toml:1:20: error: ignore must be a list of rule codes"},
      {"\nexclude = \"build\"\n", "x.toml:2:11: error: exclude must be a list of path patterns"},
      {"fail_on = \"fatal\"\n",
       "x.toml:1:11: error: fail_on must be \"error\", \"warning\" or \"note\", not \"fatal\""},
      {"fail_on = 2\n",
       "x.toml:1:11: error: fail_on must be \"error\", \"warning\" or \"note\""},
      {"target_gpu = 80\n", "x.toml:1:14: error: target_gpu must be a GPU or instance name"},
      {"respect_gitignore = \"no\"\n",
       "x.toml:1:21: error: respect_gitignore must be true or false"},
      {"severity = \"error\"\n",
       "x.toml:1:12: error: [severity] must be a table of rule codes"},
      {"[severity]\nTG001 = \"critical\"\n",
       "x.toml:2:9: error: [severity] TG001 must be \"error\", \"warning\" or \"note\", not "
       "\"critical\""},
      {"[severity]\nTG001 = 1\n",
       "x.toml:2:9: error: severity.TG001 must be \"error\", \"warning\" or \"note\""},
      {"[severity]\ntg999 = \"note\"\n",
       "x.toml:2:1: error: unknown rule code 'TG999' in [severity]"},
  };
  for (const BadValue& c : cases) {
    TempDir dir;
    ConfigResult r = load(dir.write("x.toml", c.text));
    EXPECT_EQ(r.error, c.error) << c.text;
  }
}

TEST(Config, MalformedTomlIsAnErrorAtItsPosition) {
  TempDir dir;
  ConfigResult r = load(dir.write(".preflight.toml", "select = [\"TG001\"\nfail_on = 1\n"));
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(r.error.starts_with(".preflight.toml:2:")) << r.error;
  EXPECT_NE(r.error.find(": error: "), std::string::npos) << r.error;
}

TEST(Config, PyprojectPrefersToolPreflightOverToolTorchPreflight) {
  TempDir dir;
  ConfigResult r = load(dir.write("pyproject.toml", R"([project]
name = "x"

[tool.torch-preflight]
select = ["TG003"]

[tool.preflight]
select = ["TG001"]
extra = 1

[tool.preflight.severity]
TG001 = "warning"
)"));
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.config.select, (std::vector<std::string>{"TG001"}));
  EXPECT_EQ(r.config.severity.at("TG001"), Severity::Warning);
  EXPECT_EQ(r.warnings, (std::vector<std::string>{
                            "pyproject.toml:9:1: warning: unknown configuration key "
                            "'tool.preflight.extra' (ignored)"}));
}

TEST(Config, PyprojectTorchPreflightTableAndItsErrors) {
  TempDir dir;
  ConfigResult r = load(dir.write("pyproject.toml",
                                  "[tool.torch-preflight]\nfail_on = \"note\"\n"
                                  "[tool.torch-preflight.severity]\nTG004 = \"loud\"\n"));
  EXPECT_EQ(r.error, "pyproject.toml:4:9: error: [tool.torch-preflight.severity] TG004 must be "
                     "\"error\", \"warning\" or \"note\", not \"loud\"");
  ConfigResult ok = load(dir.write("pyproject.toml", "[tool.torch-preflight]\nfail_on = \"note\"\n"));
  ASSERT_TRUE(ok.ok()) << ok.error;
  EXPECT_EQ(ok.config.fail_on, Severity::Note);
}

TEST(Config, PyprojectWithoutEitherTableIsDefaultsWhenNamedExplicitly) {
  TempDir dir;
  ConfigResult r = load(dir.write("pyproject.toml", "[tool.ruff]\nline-length = 100\n"));
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r.warnings.empty());
  EXPECT_TRUE(r.config.select.empty());
  ConfigResult bad = load(dir.write("pyproject.toml", "[tool]\npreflight = 3\n"));
  EXPECT_EQ(bad.error, "pyproject.toml:2:13: error: [tool.preflight] must be a table");
}

TEST(ConfigDiscovery, OrderWithinOneDirectory) {
  TempDir dir;
  dir.write("pyproject.toml", "[tool.preflight]\n");
  dir.write("torch-preflight.toml", "");
  dir.write(".torch-preflight.toml", "");
  dir.write(".preflight.toml", "");
  const char* order[] = {".preflight.toml", ".torch-preflight.toml", "torch-preflight.toml",
                         "pyproject.toml"};
  for (const char* name : order) {
    std::optional<ConfigLocation> found = find_config(dir.path());
    ASSERT_TRUE(found) << name;
    EXPECT_EQ(found->file, dir.path() / name);
    EXPECT_EQ(found->kind, std::string_view(name) == "pyproject.toml" ? ConfigKind::Pyproject
                                                                       : ConfigKind::WholeFile);
    fs::remove(dir.path() / name);
  }
}

// The server re-reads the configuration when the stamp of a document's directory changes.
TEST(ConfigStamp, ChangesWhenAnApplicableFileIsCreatedChangedOrRemoved) {
  TempDir dir;
  fs::path sub = dir.path() / "pkg/sub";
  fs::create_directories(sub);
  ConfigStamp empty = config_stamp(sub);
  EXPECT_EQ(config_stamp(sub), empty);
  dir.write("pyproject.toml", "[tool.preflight]\n");
  ConfigStamp created = config_stamp(sub);
  EXPECT_NE(created, empty);
  EXPECT_EQ(config_stamp(sub), created);  // nothing changed: equal
  dir.write("pyproject.toml", "[tool.preflight]\nignore = [\"TG001\"]\n");
  ConfigStamp changed = config_stamp(sub);
  EXPECT_NE(changed, created);
  dir.write("pkg/.preflight.toml", "");
  EXPECT_NE(config_stamp(sub), changed);
  fs::remove(dir.path() / "pkg/.preflight.toml");
  EXPECT_EQ(config_stamp(sub), changed);
}

TEST(ConfigDiscovery, WalksUpAndPassesOverAPyprojectWithoutTheTable) {
  TempDir dir;
  dir.write("pyproject.toml", "[tool.torch-preflight]\nselect = [\"TG001\"]\n");
  dir.write("pkg/pyproject.toml", "[project]\nname = \"pkg\"\n");
  fs::create_directories(dir.path() / "pkg/src/deep");
  std::optional<ConfigLocation> found = find_config(dir.path() / "pkg/src/deep");
  ASSERT_TRUE(found);
  EXPECT_EQ(found->file, dir.path() / "pyproject.toml");

  dir.write("pkg/src/.torch-preflight.toml", "");
  found = find_config(dir.path() / "pkg/src/deep");
  ASSERT_TRUE(found);
  EXPECT_EQ(found->file, dir.path() / "pkg/src/.torch-preflight.toml");
}

TEST(ConfigDiscovery, AMalformedPyprojectIsReportedNotSkipped) {
  TempDir dir;
  dir.write("pyproject.toml", "[tool.preflight\n");
  std::optional<ConfigLocation> found = find_config(dir.path());
  ASSERT_TRUE(found);
  ConfigResult r = load_config(*found, "pyproject.toml");
  EXPECT_TRUE(r.error.starts_with("pyproject.toml:1:")) << r.error;
}

}  // namespace
}  // namespace preflight::server
