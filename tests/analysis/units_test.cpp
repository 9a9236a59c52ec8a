// Units and the names that connect them (analysis/units.h): what a unit defines and uses
// decides which units an edit can reach, so a name missed here is a finding reused stale.
#include "analysis/units.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analysis/syntax.h"

namespace preflight::analysis {
namespace {

using Names = std::vector<std::string>;

std::vector<UnitFacts> facts_of(const std::string& text) {
  SyntaxTree tree = SyntaxTree::parse(text);
  std::vector<UnitSpan> spans = unit_spans(tree.root());
  return unit_facts(tree.root(), spans, std::vector<bool>(spans.size(), true), text);
}

bool has(const Names& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

TEST(Units, StatementsSharingALineAreOneUnit) {
  std::vector<UnitFacts> units = facts_of("x = 1; y = 2\nz = 3  # noqa\n\ndef f():\n    return z\n");
  ASSERT_EQ(units.size(), 3u);
  EXPECT_TRUE(units[0].module_code);
  EXPECT_TRUE(units[1].module_code);
  EXPECT_FALSE(units[2].module_code);
  EXPECT_EQ(units[2].start.row, 3u);
}

TEST(Units, AFunctionDefinesItsNameAndUsesWhatItDoesNotAssign) {
  std::vector<UnitFacts> units = facts_of(
      "def train(model, loader):\n"
      "    total = 0\n"
      "    for xb in loader:\n"
      "        loss = helper(model(xb))\n"
      "        total += loss\n"
      "    return total\n");
  ASSERT_EQ(units.size(), 1u);
  const UnitFacts& f = units[0];
  EXPECT_EQ(f.defines, Names{"train"});
  EXPECT_TRUE(has(f.uses, "helper"));    // a global: another unit's function
  EXPECT_TRUE(has(f.uses, "model"));     // a parameter: the module model's lookups walk past it
  EXPECT_TRUE(has(f.uses, "xb"));        // a loop target, likewise
  EXPECT_FALSE(has(f.uses, "total"));    // assigned here: the model resolves it in the function
  EXPECT_FALSE(has(f.uses, "loss"));
  EXPECT_FALSE(has(f.uses, "train"));    // its own name is a definition, not a use
}

TEST(Units, AttributesAreObjectsAndNamesAndSelfStateIsKept) {
  std::vector<UnitFacts> units = facts_of(
      "class Net(nn.Module):\n"
      "    def forward(self, x):\n"
      "        self.cache = x\n"
      "        model = self.body\n"
      "        return model.fc(self.step(x))\n");
  const UnitFacts& c = units[0];
  EXPECT_TRUE(has(c.defines, "Net"));
  EXPECT_TRUE(has(c.defines, "forward"));
  EXPECT_TRUE(has(c.uses, "nn"));        // the base class is read outside the class
  EXPECT_TRUE(has(c.uses, "model"));     // `model.fc` is looked up as a dotted name
  EXPECT_TRUE(has(c.uses, "step"));      // `self.step()` runs any method named `step`
  EXPECT_FALSE(has(c.uses, "fc"));       // an attribute of another object is not a name...
  EXPECT_TRUE(has(c.attribute_uses, "fc"));  // ...but may be any class's `self.fc`
  EXPECT_TRUE(has(c.attributes, "cache"));
  EXPECT_TRUE(has(c.attributes, "body"));
}

TEST(Units, ModuleCodeDefinesEveryNameItMentionsAndImportsPin) {
  std::vector<UnitFacts> units = facts_of("import torch as th\nloss.backward()\nf(model=net)\n");
  ASSERT_EQ(units.size(), 3u);
  EXPECT_TRUE(units[0].pinned);
  EXPECT_TRUE(has(units[0].defines, "th"));
  EXPECT_FALSE(units[1].pinned);  // a backward call is not: "the file trains" is a placed fact
  EXPECT_TRUE(has(units[1].defines, "loss"));
  EXPECT_TRUE(has(units[2].uses, "net"));
  EXPECT_FALSE(has(units[2].uses, "model"));  // a keyword names a parameter, not a value
}

TEST(Units, ReadsFollowNamesAndAttributes) {
  std::vector<UnitFacts> units = facts_of(
      "def helper(x):\n    return x\n\n"
      "def train(m):\n    return helper(m)\n\n"
      "class A:\n    def f(self):\n        self.w = 1\n\n"
      "def g(obj):\n    return obj.w\n");
  ASSERT_EQ(units.size(), 4u);
  EXPECT_TRUE(reads(units[1], units[0]));   // train calls helper
  EXPECT_FALSE(reads(units[0], units[1]));
  EXPECT_TRUE(reads(units[3], units[2]));   // obj.w may be A's self.w
  EXPECT_FALSE(reads(units[2], units[3]));
}

TEST(Units, NodeCountsAndDepthCoverEveryNodeBelowTheModule) {
  std::string text = "x = 1\ndef f():\n    return [[1]]\n";
  SyntaxTree tree = SyntaxTree::parse(text);
  std::vector<UnitFacts> units = facts_of(text);
  size_t nodes = 1;
  for (const UnitFacts& u : units) nodes += u.nodes;
  uint32_t all = 0;
  TSTreeCursor c = ts_tree_cursor_new(tree.root());
  for (bool more = true; more;) {  // every node, as the engine's size guard counts them
    ++all;
    if (ts_tree_cursor_goto_first_child(&c)) continue;
    while (!ts_tree_cursor_goto_next_sibling(&c))
      if (!ts_tree_cursor_goto_parent(&c)) {
        more = false;
        break;
      }
  }
  ts_tree_cursor_delete(&c);
  EXPECT_EQ(nodes, all);
  EXPECT_GE(units[1].depth, 5u);
}

}  // namespace
}  // namespace preflight::analysis
