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
  ASSERT_EQ(units.size(), 2u);  // the header and the method (the class is split)
  const UnitFacts& h = units[0];
  const UnitFacts& m = units[1];
  EXPECT_EQ(h.defines, Names{"Net"});
  EXPECT_FALSE(has(h.uses, "Net"));      // its own name is a definition
  EXPECT_FALSE(has(h.uses, "x"));        // the methods' names are theirs
  EXPECT_TRUE(has(h.uses, "nn"));        // the base class is read outside the class
  EXPECT_TRUE(has(m.defines, "forward"));
  EXPECT_TRUE(has(m.defines, "Net"));    // a reader of the class reads every member
  EXPECT_TRUE(has(m.uses, "model"));     // `model.fc` is looked up as a dotted name
  EXPECT_TRUE(has(m.uses, "step"));      // `self.step()` runs any method named `step`
  EXPECT_FALSE(has(m.uses, "fc"));       // an attribute of another object is not a name...
  EXPECT_TRUE(has(m.attribute_uses, "fc"));  // ...but may be any class's `self.fc`
  EXPECT_TRUE(has(m.attributes, "cache"));
  EXPECT_TRUE(has(m.attributes, "body"));
  // What `forward` returns flows into `self.forward`: it reads whoever names that attribute.
  EXPECT_TRUE(has(m.attribute_uses, "forward"));
}

TEST(Units, AClassWhoseBodyStartsOnItsOwnLineIsSplitIntoHeaderMethodsAndClassCode) {
  std::string text =
      "import torch\n\n"
      "@dataclass\n"
      "class Trainer(Base):  # the header\n"
      "    \"\"\"Docs.\"\"\"\n"
      "    lr = 0.1\n\n"
      "    def __init__(self, model):\n"
      "        self.model = model\n\n"
      "    @torch.no_grad()\n"
      "    def evaluate(self, x):\n"
      "        return self.model(x)\n"
      "class Small: pass\n"
      "def main():\n    return Trainer(1)\n";
  std::vector<UnitFacts> units = facts_of(text);
  ASSERT_EQ(units.size(), 8u);
  std::vector<UnitRole> roles;
  for (const UnitFacts& u : units) roles.push_back(u.role);
  EXPECT_EQ(roles, (std::vector<UnitRole>{UnitRole::TopLevel, UnitRole::ClassHeader, UnitRole::ClassCode,
                                          UnitRole::ClassCode, UnitRole::Method, UnitRole::Method,
                                          UnitRole::TopLevel, UnitRole::TopLevel}));
  // The header: decorators to the colon (and the comment on its line); a member starts at its
  // first byte (a decorator), not at its line.
  EXPECT_EQ(text.substr(units[1].range.begin, units[1].range.end - units[1].range.begin),
            "@dataclass\nclass Trainer(Base):  # the header");
  EXPECT_EQ(text.substr(units[5].range.begin, 16), "@torch.no_grad()");
  EXPECT_EQ(units[5].start.column, 4u);
  EXPECT_TRUE(has(units[1].uses, "dataclass"));
  EXPECT_TRUE(has(units[1].uses, "Base"));
  EXPECT_FALSE(has(units[1].uses, "model"));  // the methods' names are theirs
  EXPECT_TRUE(has(units[4].attributes, "model"));
  EXPECT_TRUE(has(units[5].uses, "torch"));   // a method's decorator
  for (size_t u = 2; u <= 5; ++u) EXPECT_TRUE(has(units[u].defines, "Trainer")) << u;
  // A class body's own statements run at import, as module code does, and the rules read
  // them so (a `model.eval()` there is in force for a module-level forward): module code.
  EXPECT_TRUE(units[2].module_code);
  EXPECT_TRUE(units[3].module_code);
  EXPECT_FALSE(units[4].module_code);  // methods run when called
  EXPECT_FALSE(units[5].module_code);
  EXPECT_TRUE(reads(units[7], units[4]));  // `Trainer(1)` reads the whole class
  EXPECT_EQ(class_headers(units), (std::vector<int>{-1, 1, 1, 1, 1, 1, -1, -1}));
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
  ASSERT_EQ(units.size(), 5u);              // A is its header and its method
  EXPECT_TRUE(reads(units[1], units[0]));   // train calls helper
  EXPECT_FALSE(reads(units[0], units[1]));
  EXPECT_TRUE(reads(units[4], units[3]));   // obj.w may be A's self.w
  EXPECT_FALSE(reads(units[3], units[4]));
  EXPECT_FALSE(reads(units[4], units[2]));  // the header keeps no state
}

TEST(Units, AMethodReadsTheUnitsThatNameItOnSelf) {
  std::vector<UnitFacts> units = facts_of(
      "class T:\n"
      "    def step(self, x):\n        return x * 2\n\n"
      "    def train(self, x):\n        self.step(x).backward()\n\n"
      "    def log(self):\n        print(1)\n");
  ASSERT_EQ(units.size(), 4u);
  EXPECT_TRUE(reads(units[1], units[2]));   // a backward on what `step` returns reaches into it
  EXPECT_TRUE(reads(units[2], units[1]));   // and `train` calls it
  EXPECT_FALSE(reads(units[3], units[1]));
  EXPECT_FALSE(reads(units[1], units[3]));
}

TEST(Units, NodeCountsAndDepthCoverEveryNodeBelowTheModule) {
  std::string text = "x = 1\ndef f():\n    return [[1]]\n"
                     "@dec(1)\nclass C(B):\n    y = [[[2]]]\n    def g(self):\n        return [[[[3]]]]\n";
  SyntaxTree tree = SyntaxTree::parse(text);
  std::vector<UnitFacts> units = facts_of(text);
  size_t nodes = 1;
  for (const UnitFacts& u : units) nodes += u.nodes;
  uint32_t all = 0, level = 0, deepest = 0, unit_deepest = 0;
  for (const UnitFacts& u : units) unit_deepest = std::max(unit_deepest, u.depth);
  TSTreeCursor c = ts_tree_cursor_new(tree.root());
  for (bool more = true; more;) {  // every node, as the engine's size and depth guards count them
    ++all;
    deepest = std::max(deepest, level);
    if (ts_tree_cursor_goto_first_child(&c)) {
      ++level;
      continue;
    }
    while (!ts_tree_cursor_goto_next_sibling(&c)) {
      if (!ts_tree_cursor_goto_parent(&c)) {
        more = false;
        break;
      }
      --level;
    }
  }
  ts_tree_cursor_delete(&c);
  EXPECT_EQ(nodes, all);  // the split class's header counts the class and its body nodes
  EXPECT_EQ(unit_deepest, deepest);  // a member counts the levels above it
  EXPECT_GE(units[1].depth, 5u);
}

}  // namespace
}  // namespace preflight::analysis
