// The files a team looks for before adopting the tool: the licence and the changelog.
#include <gtest/gtest.h>

#include <string>

#include "test_support.h"

namespace preflight::server {
namespace {

using testing::fs::path;

std::string source_file(const char* name) {
  path p = path(PF_SOURCE_DIR) / name;
  EXPECT_TRUE(testing::fs::exists(p)) << p;
  return testing::read_file(p);
}

TEST(ProjectFiles, LicenseIsMitForPreflightContributors) {
  std::string license = source_file("LICENSE");
  EXPECT_TRUE(license.starts_with("MIT License\n")) << license.substr(0, 40);
  EXPECT_NE(license.find("Copyright (c) 2026 preflight contributors\n"), std::string::npos);
  EXPECT_NE(license.find("Permission is hereby granted, free of charge"), std::string::npos);
  EXPECT_NE(license.find("THE SOFTWARE IS PROVIDED \"AS IS\""), std::string::npos);
}

// Nothing is tagged yet, so the only section is Unreleased: a version heading would claim
// a release that does not exist.
TEST(ProjectFiles, ChangelogHasOnlyAnUnreleasedSection) {
  std::string changelog = source_file("CHANGELOG.md");
  EXPECT_TRUE(changelog.starts_with("# Changelog\n"));
  std::size_t first = changelog.find("\n## [");
  ASSERT_NE(first, std::string::npos);
  EXPECT_EQ(changelog.compare(first, 17, "\n## [Unreleased]\n"), 0);
  EXPECT_EQ(changelog.find("\n## [", first + 1), std::string::npos);
  EXPECT_NE(changelog.find("\n### Added\n"), std::string::npos);
}

}  // namespace
}  // namespace preflight::server
