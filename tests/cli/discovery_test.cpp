// File discovery (rules.md §8): sorting, built-in and user excludes, explicit files, missing
// paths, symlink loops, and excludes matched relative to the starting directory.
#include "server/cli/discovery.h"

#include <gtest/gtest.h>

#include "test_support.h"

namespace preflight::server {
namespace {

using testing::TempDir;
namespace fs = std::filesystem;

// The discovered paths, relative to `root`, for readable expectations.
std::vector<std::string> relative_paths(const DiscoveryResult& r, const fs::path& root) {
  std::vector<std::string> out;
  for (const SourceFile& f : r.files)
    out.push_back(fs::path(f.path).lexically_relative(root).generic_string());
  return out;
}

DiscoveryResult discover(const std::vector<std::string>& inputs,
                         std::vector<std::string> excludes = {}, fs::path base = {}) {
  return discover_files(inputs, {std::move(excludes), std::move(base), {}, {}, {}});
}

DiscoveryResult discover_respecting_gitignore(const std::vector<std::string>& inputs) {
  return discover_files(inputs, {{}, {}, {}, /*respect_gitignore=*/true, {}});
}

// Changes the working directory for one test and restores it.
class CurrentDirGuard {
 public:
  explicit CurrentDirGuard(const fs::path& dir) : saved_(fs::current_path()) {
    fs::current_path(dir);
  }
  ~CurrentDirGuard() { fs::current_path(saved_); }

 private:
  fs::path saved_;
};

TEST(Discovery, WalksRecursivelyForPyFilesInSortedOrder) {
  TempDir dir;
  for (const char* name : {"b.py", "a.py", "pkg.py", "pkg/m.py", "pkg/deep/z.py", "notes.txt",
                           "types.pyi", "a.pyc"})
    dir.write(name, "x = 1\n");
  DiscoveryResult r = discover({dir.path().string()});
  EXPECT_EQ(relative_paths(r, dir.path()),
            (std::vector<std::string>{"a.py", "b.py", "pkg.py", "pkg/deep/z.py", "pkg/m.py"}));
  EXPECT_TRUE(r.missing.empty());
  EXPECT_TRUE(r.failures.empty());
}

TEST(Discovery, PrunesBuiltinExcludedDirectoriesByExactName) {
  TempDir dir;
  for (const char* d : {".git", ".hg", ".svn", ".tox", ".nox", ".venv", "venv", "env",
                        "__pycache__", "node_modules", "build", "dist", ".eggs", "site-packages",
                        ".mypy_cache", ".pytest_cache", ".ruff_cache", ".ipynb_checkpoints"})
    dir.write(std::string("src/") + d + "/x.py", "x = 1\n");
  dir.write("src/environment/kept.py", "x = 1\n");
  dir.write("src/builder/kept.py", "x = 1\n");
  DiscoveryResult r = discover({dir.path().string()});
  EXPECT_EQ(relative_paths(r, dir.path()),
            (std::vector<std::string>{"src/builder/kept.py", "src/environment/kept.py"}));
}

TEST(Discovery, ExplicitPythonFileIsCheckedEvenWhenExcluded) {
  TempDir dir;
  fs::path generated = dir.write("build/gen.py", "x = 1\n");
  fs::path vendored = dir.write("third_party/lib.pyi", "x: int\n");
  DiscoveryResult r =
      discover({generated.string(), vendored.string()}, {"third_party", "build"});
  EXPECT_EQ(relative_paths(r, dir.path()),
            (std::vector<std::string>{"build/gen.py", "third_party/lib.pyi"}));
}

TEST(Discovery, ExplicitNonPythonFileIsSilentlyIgnored) {
  TempDir dir;
  fs::path notes = dir.write("notes.txt", "hello\n");
  DiscoveryResult r = discover({notes.string()});
  EXPECT_TRUE(r.files.empty());
  EXPECT_TRUE(r.missing.empty());
  EXPECT_TRUE(r.failures.empty());
}

TEST(Discovery, MissingPathIsReported) {
  TempDir dir;
  dir.write("a.py", "x = 1\n");
  std::string missing = (dir.path() / "nope").string();
  DiscoveryResult r = discover({dir.path().string(), missing});
  EXPECT_EQ(r.missing, (std::vector<std::string>{missing}));
  EXPECT_EQ(relative_paths(r, dir.path()), (std::vector<std::string>{"a.py"}));
}

TEST(Discovery, UserPatternExcludesDirectoryNamesAnywhere) {
  TempDir dir;
  dir.write("third_party/t.py", "");
  dir.write("nested/third_party/u.py", "");
  dir.write("third_party_tools/kept.py", "");
  DiscoveryResult r = discover({dir.path().string()}, {"third_party/"});
  EXPECT_EQ(relative_paths(r, dir.path()), (std::vector<std::string>{"third_party_tools/kept.py"}));
}

TEST(Discovery, GlobMatchesRelativeToStartingDirectoryForAbsoluteInputs) {
  TempDir dir;
  dir.write("sub/a.py", "");
  dir.write("sub/keep/b.txt", "");
  dir.write("other/c.py", "");
  // Relative to the base the path is "sub/a.py": excluded although the input was absolute.
  DiscoveryResult r = discover({dir.path().string()}, {"sub/*.py"}, dir.path());
  EXPECT_EQ(relative_paths(r, dir.path()), (std::vector<std::string>{"other/c.py"}));
  // From elsewhere the relative form is "<dir>/sub/a.py" and no longer matches.
  DiscoveryResult elsewhere = discover({dir.path().string()}, {"sub/*.py"}, "/nonexistent-base");
  EXPECT_EQ(relative_paths(elsewhere, dir.path()),
            (std::vector<std::string>{"other/c.py", "sub/a.py"}));
}

TEST(Discovery, RelativeInputsAreShownWithoutDotPrefixAndMatchGlobs) {
  TempDir dir;
  dir.write("sub/a.py", "");
  dir.write("top.py", "");
  CurrentDirGuard cwd(dir.path());
  DiscoveryResult all = discover({"."}, {}, dir.path());
  ASSERT_EQ(all.files.size(), 2u);
  EXPECT_EQ(all.files[0].path, "sub/a.py");
  EXPECT_EQ(all.files[1].path, "top.py");
  DiscoveryResult excluded = discover({"./"}, {"sub/*.py"}, dir.path());
  ASSERT_EQ(excluded.files.size(), 1u);
  EXPECT_EQ(excluded.files[0].path, "top.py");
}

TEST(Discovery, SymlinkLoopsAreEnteredOnceAndFilesListedOnce) {
  TempDir dir;
  dir.write("pkg/a.py", "");
  fs::create_directory_symlink(dir.path(), dir.path() / "pkg" / "loop");
  fs::create_directory_symlink(dir.path() / "pkg", dir.path() / "alias");
  DiscoveryResult r = discover({dir.path().string()});
  ASSERT_EQ(r.files.size(), 1u);
  EXPECT_TRUE(r.files[0].path.ends_with("/a.py"));
}

TEST(Discovery, EachFileOnceWhenNamedTwice) {
  TempDir dir;
  fs::path a = dir.write("a.py", "");
  DiscoveryResult r = discover({dir.path().string(), a.string(), a.string()});
  EXPECT_EQ(relative_paths(r, dir.path()), (std::vector<std::string>{"a.py"}));
}

// A repository: the root's .gitignore applies everywhere below it, a nested one only under its
// own directory; comments and negations are skipped.
TEST(Discovery, GitignoredFilesAreSkippedOnlyWhenAsked) {
  TempDir dir;
  fs::create_directories(dir.path() / ".git");
  dir.write(".gitignore", "# generated code\n/generated/\n*_pb2.py\n!keep_pb2.py\n\n");
  dir.write("sub/.gitignore", "local.py\r\n");
  for (const char* name : {"main.py", "generated/x.py", "api_pb2.py", "keep_pb2.py",
                           "sub/local.py", "sub/kept.py", "other/local.py"})
    dir.write(name, "x = 1\n");
  EXPECT_EQ(relative_paths(discover_respecting_gitignore({dir.path().string()}), dir.path()),
            (std::vector<std::string>{"main.py", "other/local.py", "sub/kept.py"}));
  EXPECT_EQ(relative_paths(discover({dir.path().string()}), dir.path()),
            (std::vector<std::string>{"api_pb2.py", "generated/x.py", "keep_pb2.py", "main.py",
                                      "other/local.py", "sub/kept.py", "sub/local.py"}));
}

// `check pkg` inside a repository reads the .gitignore files between pkg and the repository
// root; outside a repository no .gitignore above the named directory applies.
TEST(Discovery, GitignoresAboveANamedDirectoryApplyUpToTheRepositoryRoot) {
  TempDir dir;
  dir.write(".gitignore", "pkg\n");  // above the repository: never read
  dir.write("repo/.gitignore", "gen\n");
  dir.write("repo/pkg/gen/x.py", "x = 1\n");
  dir.write("repo/pkg/a.py", "x = 1\n");
  fs::path pkg = dir.path() / "repo/pkg";
  EXPECT_EQ(relative_paths(discover_respecting_gitignore({pkg.string()}), pkg),
            (std::vector<std::string>{"a.py", "gen/x.py"}));  // no .git yet: not a repository
  fs::create_directories(dir.path() / "repo/.git");
  EXPECT_EQ(relative_paths(discover_respecting_gitignore({pkg.string()}), pkg),
            (std::vector<std::string>{"a.py"}));
}

TEST(Discovery, ANamedFileIsCheckedEvenWhenGitignored) {
  TempDir dir;
  dir.write(".gitignore", "scratch.py\ngen/\n");
  fs::path scratch = dir.write("scratch.py", "x = 1\n");
  fs::path generated = dir.write("gen/out.py", "x = 1\n");
  DiscoveryResult r = discover_respecting_gitignore({scratch.string(), generated.string()});
  EXPECT_EQ(relative_paths(r, dir.path()), (std::vector<std::string>{"gen/out.py", "scratch.py"}));
}

TEST(Gitignore, PatternsSkipCommentsNegationsAndALeadingSlash) {
  TempDir dir;
  dir.write(".gitignore", "# c\n/build_out/\n!keep.py\n*.tmp.py  \n/\n");
  EXPECT_EQ(gitignore_patterns(dir.path()), (std::vector<std::string>{"build_out/", "*.tmp.py"}));
  EXPECT_TRUE(gitignore_patterns(dir.path() / "none").empty());
}

TEST(ExcludePattern, FollowsTheReferenceRules) {
  EXPECT_TRUE(matches_exclude_pattern("sub/a.py", "sub/*.py"));
  EXPECT_TRUE(matches_exclude_pattern("sub/deep/a.py", "sub/*.py"));  // `*` crosses '/'
  EXPECT_TRUE(matches_exclude_pattern("sub/deep/a.py", "sub"));       // p/*
  EXPECT_TRUE(matches_exclude_pattern("x/sub/a.py", "sub"));          // /p/ inside
  EXPECT_TRUE(matches_exclude_pattern("x/sub/a.py", "sub/"));         // trailing '/' dropped
  EXPECT_TRUE(matches_exclude_pattern("sub/a.py", "./sub"));
  EXPECT_TRUE(matches_exclude_pattern("a.py", "*.py"));
  EXPECT_TRUE(matches_exclude_pattern("x/gen_1.py", "x/gen_?.py"));
  EXPECT_TRUE(matches_exclude_pattern("x/gen_1.py", "x/gen_[0-9].py"));
  EXPECT_FALSE(matches_exclude_pattern("x/subway/a.py", "sub"));
  EXPECT_FALSE(matches_exclude_pattern("a.pyc", "*.py"));
  EXPECT_FALSE(matches_exclude_pattern("a.py", ""));
}

TEST(ExcludePattern, BuiltinNamesAreExact) {
  EXPECT_TRUE(is_builtin_excluded(".venv"));
  EXPECT_TRUE(is_builtin_excluded("site-packages"));
  EXPECT_FALSE(is_builtin_excluded("venvs"));
  EXPECT_FALSE(is_builtin_excluded("Build"));
}

}  // namespace
}  // namespace preflight::server
