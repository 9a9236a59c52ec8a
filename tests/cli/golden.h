// Golden files under tests/cli/golden/, compared byte for byte. Only with
// PREFLIGHT_UPDATE_GOLDEN=1 in the environment is an expected file (re)written from the actual
// output; the rewrite is logged, and `git diff` shows what changed.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <string_view>

#include "test_support.h"

namespace preflight::server::testing {

inline bool updating_golden() {
  const char* v = std::getenv("PREFLIGHT_UPDATE_GOLDEN");
  return v && std::string_view(v) == "1";
}

// Compares `actual` with the file at `path`; rewrites it when updating.
inline void expect_file_equals(const fs::path& path, const std::string& actual) {
  std::string expected = fs::exists(path) ? read_file(path) : std::string();
  if (updating_golden() && expected != actual) {
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << actual;
    std::cerr << "PREFLIGHT_UPDATE_GOLDEN=1: rewrote " << path << "\n";
    return;
  }
  ASSERT_TRUE(fs::exists(path)) << path << " is missing: run with PREFLIGHT_UPDATE_GOLDEN=1";
  EXPECT_EQ(actual, expected) << "differs from " << path
                              << " (regenerate with PREFLIGHT_UPDATE_GOLDEN=1)";
}

inline void expect_golden(std::string_view name, const std::string& actual) {
  expect_file_equals(fs::path(PF_SOURCE_DIR) / "tests/cli/golden" / name, actual);
}

}  // namespace preflight::server::testing
