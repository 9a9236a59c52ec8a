// Every safe `.detach()` fix lands on a proven tensor, and applying every safe fix leaves a
// file that parses: over all fixtures and, with PF_SAFE_FIX_CORPUS=<dir>, every .py file of a
// real corpus (issue 23: "0 safe fixes that break code").
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "analysis/module_model.h"
#include "analysis/provenance.h"
#include "analysis/syntax.h"
#include "rules/engine.h"
#include "rules/registry.h"
#include "tests/rules/fixture_runner.h"

namespace preflight::tests {
namespace {

using namespace preflight::analysis;

// The expression a `.detach()` insertion at `end` completes: the largest named node ending
// there that is still an expression (not the argument list or statement around it).
TSNode expression_ending_at(TSNode root, uint32_t end) {
  const Kinds& k = kinds();
  TSNode n = ts_node_named_descendant_for_byte_range(root, end - 1, end);
  while (!ts_node_is_null(n)) {
    TSNode parent = ts_node_parent(n);
    if (ts_node_is_null(parent) || ts_node_end_byte(parent) != end) break;
    TSSymbol s = sym(parent);
    if (s == k.argument_list || s == k.expression_statement || s == k.assignment ||
        s == k.augmented_assignment || s == k.block || s == k.module || s == k.pair)
      break;
    n = parent;
  }
  while (!ts_node_is_null(n) && ts_node_end_byte(n) == end && is(n, kinds().parenthesized_expression))
    n = unparenthesize(n);
  return n;
}

// Empty when every safe fix of `text` is sound, else what is wrong.
std::string check_safe_fixes(const std::string& text) {
  rules::CheckResult result = rules::check_source(text, rules::CheckOptions{});
  if (result.status != rules::FileStatus::Analyzed) return {};
  SyntaxTree tree = SyntaxTree::parse(text);
  ModuleModel model(tree.root(), text);
  Provenance prov(model);
  std::string problems;
  for (const Finding& f : result.findings)
    for (const Fix& fix : f.fixes) {
      if (fix.safety != FixSafety::Safe || f.code != "TG001") continue;
      // The warning-level finding is the one whose graph a backward already consumed: how the
      // graph was built no longer matters there, only that the value is a tensor.
      bool consumed = f.category == Category::PerformanceWarn;
      for (const TextEdit& e : fix.edits) {
        if (!e.replacement.ends_with(".detach()")) continue;
        TSNode expr = expression_ending_at(tree.root(), e.range.end);  // an insertion (begin == end) or `(a * b).detach()` replacing `a * b`
        const Value* v = ts_node_is_null(expr) ? nullptr : prov.value_of(expr);
        // `loss_dict['loss'].backward()` ... `total += loss_dict['loss']`: an entry of a mapping
        // (a container of tensors to the provenance) that a backward ran over, as written.
        bool backwarded_as_written =
            v && v->type == Type::Tensors && consumed && !ts_node_is_null(expr) &&
            text.find(std::string(text_of(expr, text)) + ".backward()") != std::string::npos;
        if (!v || !(v->tensor() || backwarded_as_written) || !(v->proven() || v->consumed || consumed))
          problems += "safe .detach() on `" + std::string(ts_node_is_null(expr) ? "?" : text_of(expr, text)) +
                      "`, which is not a proven tensor (" +
                      std::string(v ? type_name(v->type) : "no value") + ")\n";
      }
    }
  FixOutcome outcome = apply_safe_fixes(text, result.findings);
  if (result.syntax_errors.empty() && !outcome.applied.empty()) {
    rules::CheckResult rerun = rules::check_source(outcome.text, rules::CheckOptions{});
    if (!rerun.syntax_errors.empty()) problems += "the text after every safe fix does not parse\n";
  }
  return problems;
}

std::vector<std::filesystem::path> python_files(const std::filesystem::path& root) {
  std::vector<std::filesystem::path> out;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(root, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec))
    if (it->is_regular_file() && it->path().extension() == ".py" &&
        !it->path().string().ends_with(".fixed.py"))
      out.push_back(it->path());
  return out;
}

TEST(SafeFixes, EverySafeDetachOfEveryFixtureIsOnAProvenTensor) {
  int fixes_seen = 0;
  for (const auto& path : python_files(PF_TEST_FIXTURES)) {
    auto text = read_text(path);
    ASSERT_TRUE(text) << path;
    EXPECT_EQ(check_safe_fixes(*text), "") << path;
    for (const Finding& f : rules::check_source(*text, rules::CheckOptions{}).findings)
      for (const Fix& fix : f.fixes) fixes_seen += f.code == "TG001" && fix.safety == FixSafety::Safe;
  }
  EXPECT_GT(fixes_seen, 5);  // the check above is not vacuous
}

// Each rule's FixPolicy (what `explain` and docs/rules.md tell the user --fix does) against
// the fixes it actually offers over every fixture: a rule said to have no fix offers none, an
// unsafe-only rule never a safe one, a safe rule never an unsafe one; and a rule said to
// have fixes offers them somewhere.
TEST(FixPolicy, EachRuleOffersTheFixesItsPolicyStates) {
  std::map<std::string, std::pair<int, int>> seen;  // code -> (safe, unsafe) fixes offered
  for (const auto& path : python_files(PF_TEST_FIXTURES)) {
    auto text = read_text(path);
    ASSERT_TRUE(text) << path;
    for (const Finding& f : rules::check_source(*text, rules::CheckOptions{}).findings)
      for (const Fix& fix : f.fixes) {
        auto& [safe, unsafe] = seen[f.code];
        ++(fix.safety == FixSafety::Safe ? safe : unsafe);
      }
  }
  for (const rules::RuleMeta& rule : rules::all_rules()) {
    auto [safe, unsafe] = seen[std::string(rule.code)];
    std::string what = std::string(rule.code) + ": " + std::to_string(safe) + " safe, " +
                       std::to_string(unsafe) + " unsafe fixes";
    switch (rule.fix) {
      case rules::FixPolicy::None: EXPECT_EQ(safe + unsafe, 0) << what; break;
      case rules::FixPolicy::Safe: EXPECT_TRUE(safe > 0 && unsafe == 0) << what; break;
      case rules::FixPolicy::SafeWhenProven: EXPECT_TRUE(safe > 0 && unsafe > 0) << what; break;
      case rules::FixPolicy::UnsafeOnly: EXPECT_TRUE(safe == 0 && unsafe > 0) << what; break;
    }
  }
}

TEST(SafeFixes, EverySafeDetachOfARealCorpusIsOnAProvenTensor) {
  const char* corpus = std::getenv("PF_SAFE_FIX_CORPUS");
  if (!corpus) GTEST_SKIP() << "set PF_SAFE_FIX_CORPUS to a directory of real training code";
  for (const auto& path : python_files(corpus)) {
    auto text = read_text(path);
    if (!text) continue;
    EXPECT_EQ(check_safe_fixes(*text), "") << path;
  }
}

}  // namespace
}  // namespace preflight::tests
