// Fix application (rules.md §9.9): byte-exact edits, first-wins on conflicts, only Safe
// fixes; and the file writes behind --fix: atomic, permission-preserving, link-preserving.
#include "server/cli/fix_apply.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/cli/file_io.h"
#include "test_support.h"

namespace preflight::server {
namespace {

using analysis::ByteRange;
using analysis::Finding;
using analysis::FixSafety;
using testing::make_finding;
using testing::make_fix;
using testing::TempDir;
namespace fs = std::filesystem;

Finding insertion(std::string code, uint32_t at, std::string text,
                  FixSafety safety = FixSafety::Safe) {
  return make_finding(std::move(code), at, at,
                      {make_fix("insert " + text, safety, {{{at, at}, text}})});
}

Finding replacement(std::string code, uint32_t begin, uint32_t end, std::string text) {
  return make_finding(std::move(code), begin, end,
                      {make_fix("replace", FixSafety::Safe, {{{begin, end}, text}})});
}

TEST(FixApply, AppliesNonOverlappingEditsByteExactly) {
  // CRLF line ends, a comment and trailing spaces must survive untouched.
  std::string text = "a = f(loss)  # keep me\r\nb.append(out)   \r\n";
  std::vector<Finding> findings = {insertion("TG001", 10, ".detach()"),
                                   insertion("TG001", 36, ".detach()")};
  FixPlan plan = plan_safe_fixes(text, findings);
  EXPECT_EQ(plan.text, "a = f(loss.detach())  # keep me\r\nb.append(out.detach())   \r\n");
  EXPECT_EQ(plan.applied, (std::vector<std::size_t>{0, 1}));
}

TEST(FixApply, FirstFixInReportOrderWinsAnOverlap) {
  std::string text = "y = softmax(sigmoid(x))\n";
  // Both rewrite overlapping spans; the second stays reported and unfixed.
  std::vector<Finding> findings = {replacement("TG005", 4, 23, "sigmoid(x)"),
                                   replacement("TG006", 12, 22, "x")};
  FixPlan plan = plan_safe_fixes(text, findings);
  EXPECT_EQ(plan.text, "y = sigmoid(x)\n");
  EXPECT_EQ(plan.applied, (std::vector<std::size_t>{0}));
}

TEST(FixApply, AFixIsAppliedWholeOrNotAtAll) {
  std::string text = "def evaluate(model):\n    return model(x)\n";
  Finding first = replacement("TG001", 32, 37, "net");  // "model" in the body
  Finding multi = make_finding("TG002", 0, 3,
                               {make_fix("two edits", FixSafety::Safe,
                                         {{{0, 0}, "@torch.no_grad()\n"}, {{34, 36}, "XX"}})});
  FixPlan plan = plan_safe_fixes(text, std::vector<Finding>{first, multi});
  // The second fix's later edit overlaps the first fix, so its decorator is not added either.
  EXPECT_EQ(plan.text, "def evaluate(model):\n    return net(x)\n");
  EXPECT_EQ(plan.applied, (std::vector<std::size_t>{0}));
}

TEST(FixApply, OnlyTheFirstSafeFixIsEverApplied) {
  std::string text = "z = x.softmax(1)\n";
  Finding f = make_finding("TG005", 4, 16,
                           {make_fix("unsafe unwrap", FixSafety::Unsafe, {{{4, 16}, "1"}}),
                            make_fix("display", FixSafety::DisplayOnly, {{{4, 16}, "?"}}),
                            make_fix("safe", FixSafety::Safe, {{{4, 16}, "x"}}),
                            make_fix("second safe", FixSafety::Safe, {{{0, 1}, "w"}})});
  FixPlan plan = plan_safe_fixes(text, std::vector<Finding>{f});
  EXPECT_EQ(plan.text, "z = x\n");
}

TEST(FixApply, UnsafeOnlyFindingsAreLeftAlone) {
  std::string text = "total += loss\n";
  std::vector<Finding> findings = {insertion("TG001", 13, ".item()", FixSafety::Unsafe)};
  FixPlan plan = plan_safe_fixes(text, findings);
  EXPECT_EQ(plan.text, text);
  EXPECT_TRUE(plan.applied.empty());
}

TEST(FixApply, UnsafeFixesAreTakenOnlyWhenAskedAndOnlyWithoutASafeOne) {
  std::string text = "total += loss\nz = x.softmax(1)\n";
  Finding unsafe_only = insertion("TG001", 13, ".item()", FixSafety::Unsafe);
  Finding both = make_finding("TG005", 18, 30,
                              {make_fix("unsafe first", FixSafety::Unsafe, {{{18, 30}, "1"}}),
                               make_fix("display", FixSafety::DisplayOnly, {{{18, 30}, "?"}}),
                               make_fix("safe", FixSafety::Safe, {{{18, 30}, "x"}})});
  Finding display_only = make_finding(
      "TG004", 0, 5, {make_fix("display", FixSafety::DisplayOnly, {{{0, 5}, "shown"}})});
  std::vector<Finding> findings = {unsafe_only, both, display_only};
  FixPlan safe = plan_safe_fixes(text, findings);
  EXPECT_EQ(safe.text, "total += loss\nz = x\n");
  EXPECT_EQ(safe.applied, (std::vector<std::size_t>{1}));
  FixPlan all = plan_safe_fixes(text, findings, FixScope::SafeAndUnsafe);
  EXPECT_EQ(all.text, "total += loss.item()\nz = x\n");  // the safe fix still wins for TG005
  EXPECT_EQ(all.applied, (std::vector<std::size_t>{0, 1}));
}

TEST(FixApply, MalformedEditsAreNeverApplied) {
  std::string text = "abc\n";
  std::vector<Finding> findings = {
      replacement("TG001", 2, 40, "past the end"),
      make_finding("TG001", 0, 1, {make_fix("reversed", FixSafety::Safe, {{{3, 1}, "r"}})}),
      make_finding("TG001", 0, 1,
                   {make_fix("self-overlap", FixSafety::Safe, {{{0, 2}, "x"}, {{1, 3}, "y"}})}),
      make_finding("TG001", 0, 1, {make_fix("no edits", FixSafety::Safe, {})}),
      replacement("TG004", 0, 1, "A")};
  FixPlan plan = plan_safe_fixes(text, findings);
  EXPECT_EQ(plan.text, "Abc\n");
  EXPECT_EQ(plan.applied, (std::vector<std::size_t>{4}));
}

TEST(FixApply, ConflictRules) {
  EXPECT_TRUE(edits_conflict({2, 5}, {4, 8}));
  EXPECT_FALSE(edits_conflict({2, 5}, {5, 8}));  // adjacent replacements compose
  EXPECT_TRUE(edits_conflict({5, 5}, {5, 5}));   // two insertions at one point: order unclear
  EXPECT_TRUE(edits_conflict({5, 5}, {2, 5}));   // insertion at a replaced range's end
  EXPECT_TRUE(edits_conflict({2, 2}, {2, 5}));   // ... or at its start
  EXPECT_TRUE(edits_conflict({3, 3}, {2, 5}));
  EXPECT_FALSE(edits_conflict({6, 6}, {2, 5}));
}

TEST(FixApply, ApplyEditsSortsItsInput) {
  EXPECT_EQ(apply_edits("0123456789", {{{8, 9}, "h"}, {{0, 0}, ">"}, {{3, 5}, ""}}),
            ">012567h9");
}

TEST(FileIo, AtomicWriteReplacesContentAndKeepsPermissions) {
  TempDir dir;
  fs::path file = dir.write("train.py", "old\n");
  fs::permissions(file, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                            fs::perms::owner_exec);
  ASSERT_EQ(write_file_atomic(file, "new\r\ncontent"), "");
  EXPECT_EQ(testing::read_file(file), "new\r\ncontent");
  EXPECT_EQ(fs::status(file).permissions(), fs::perms::owner_read | fs::perms::owner_write |
                                                fs::perms::group_read | fs::perms::owner_exec);
  // No temporary file is left beside it.
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir.path()))
    names.push_back(entry.path().filename().string());
  EXPECT_EQ(names, (std::vector<std::string>{"train.py"}));
}

TEST(FileIo, AtomicWriteThroughASymlinkKeepsTheLink) {
  TempDir dir;
  fs::path target = dir.write("real/train.py", "old\n");
  fs::path link = dir.path() / "link.py";
  fs::create_symlink(target, link);
  ASSERT_EQ(write_file_atomic(link, "new\n"), "");
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(testing::read_file(target), "new\n");
}

TEST(FileIo, AtomicWriteToAMissingFileFailsAndCreatesNothing) {
  TempDir dir;
  EXPECT_NE(write_file_atomic(dir.path() / "gone" / "x.py", "new\n"), "");
  EXPECT_FALSE(fs::exists(dir.path() / "gone"));
}

// Reads `file` as the run does and returns the guard a --fix write of it would carry.
struct ReadForFix {
  std::string text;
  WriteGuard guard;
  explicit ReadForFix(const fs::path& file, std::vector<fs::path> roots = {}) {
    ReadResult r = read_source_file(file);
    text = r.text.value_or("");
    guard = {text, r.stamp, std::move(roots)};
  }
};

TEST(FileIo, AFileEditedAfterItWasReadIsNotOverwritten) {
  TempDir dir;
  fs::path file = dir.write("train.py", "old\n");
  ReadForFix read(file);
  dir.write("train.py", "the user's edit\n");
  std::string error = write_file_atomic(file, "fixed\n", read.guard);
  EXPECT_NE(error.find("changed on disk while preflight checked it"), std::string::npos) << error;
  EXPECT_EQ(testing::read_file(file), "the user's edit\n");
  // Same bytes written again (a new inode or mtime): still refused, nothing is lost either way.
  fs::path other = dir.write("other.py", "same\n");
  ReadForFix same(other);
  fs::remove(other);
  dir.write("other.py", "same\n");
  EXPECT_NE(write_file_atomic(other, "fixed\n", same.guard), "");
  EXPECT_EQ(testing::read_file(other), "same\n");
  // Unchanged: written.
  fs::path kept = dir.write("kept.py", "old\n");
  ReadForFix unchanged(kept);
  EXPECT_EQ(write_file_atomic(kept, "fixed\n", unchanged.guard), "");
  EXPECT_EQ(testing::read_file(kept), "fixed\n");
}

TEST(FileIo, AReadOnlyFileIsRefused) {
  TempDir dir;
  fs::path file = dir.write("train.py", "old\n");
  fs::permissions(file, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  ReadForFix read(file);
  std::string error = write_file_atomic(file, "fixed\n", read.guard);
  EXPECT_NE(error.find("read-only"), std::string::npos) << error;
  EXPECT_NE(error.find("black and ruff"), std::string::npos) << error;
  EXPECT_EQ(testing::read_file(file), "old\n");
  EXPECT_EQ(fs::status(file).permissions(),
            fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
}

TEST(FileIo, OwnerAndGroupAreKept) {
  if (::geteuid() != 0) GTEST_SKIP() << "giving a file another owner needs root";
  TempDir dir;
  fs::path file = dir.write("train.py", "old\n");
  ASSERT_EQ(::chown(file.c_str(), 4242, 4343), 0);
  ReadForFix read(file);
  ASSERT_EQ(write_file_atomic(file, "fixed\n", read.guard), "");
  struct stat st {};
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 4242u);
  EXPECT_EQ(st.st_gid, 4343u);
  EXPECT_EQ(testing::read_file(file), "fixed\n");
}

// A rename would give the other name the old text and this one the new; writing in place
// keeps the link but could leave a truncated file if interrupted. Refusing loses nothing.
TEST(FileIo, AFileWithHardLinksIsRefusedAndBothNamesKeepTheirBytes) {
  TempDir dir;
  fs::path file = dir.write("train.py", "old\n");
  fs::path alias = dir.path() / "alias.py";
  fs::create_hard_link(file, alias);
  ReadForFix read(file);
  std::string error = write_file_atomic(file, "fixed\n", read.guard);
  EXPECT_NE(error.find("2 hard links"), std::string::npos) << error;
  EXPECT_EQ(testing::read_file(file), "old\n");
  EXPECT_EQ(fs::hard_link_count(file), 2u);
  EXPECT_TRUE(fs::equivalent(file, alias));
}

TEST(FileIo, APathThatResolvesOutsideTheRootsIsRefused) {
  TempDir dir;
  fs::path outside = dir.write("elsewhere/lib.py", "old\n");
  fs::path inside = dir.write("project/train.py", "old\n");
  fs::path link = dir.path() / "project" / "lib.py";
  fs::create_symlink(outside, link);
  std::vector<fs::path> roots = canonical_roots({(dir.path() / "project").string()});
  ReadForFix through_link(link, roots);
  std::string error = write_file_atomic(link, "fixed\n", through_link.guard);
  EXPECT_NE(error.find("outside the paths given on the command line"), std::string::npos)
      << error;
  EXPECT_EQ(testing::read_file(outside), "old\n");
  ReadForFix own(inside, roots);
  EXPECT_EQ(write_file_atomic(inside, "fixed\n", own.guard), "");
  // A file named itself is its own root, wherever its link points.
  ReadForFix named(link, canonical_roots({link.string()}));
  EXPECT_EQ(write_file_atomic(link, "fixed\n", named.guard), "");
  EXPECT_EQ(testing::read_file(outside), "fixed\n");
}

TEST(FileIo, ReadRefusesFilesOverTheLimit) {
  TempDir dir;
  fs::path file = dir.write("big.py", std::string(101, 'x'));
  ReadResult big = read_source_file(file, 100);
  EXPECT_FALSE(big.text.has_value());
  EXPECT_EQ(big.error, "file too large to analyze (101 bytes)");
  ReadResult ok = read_source_file(file, 101);
  ASSERT_TRUE(ok.text.has_value());
  EXPECT_EQ(ok.text->size(), 101u);
}

TEST(FileIo, ReadKeepsBytesExactly) {
  TempDir dir;
  std::string bytes("a\r\nb\0c\xff\n", 9);
  fs::path file = dir.write("raw.py", bytes);
  ReadResult r = read_source_file(file);
  ASSERT_TRUE(r.text.has_value());
  EXPECT_EQ(*r.text, bytes);
}

}  // namespace
}  // namespace preflight::server
