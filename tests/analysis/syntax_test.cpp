#include "analysis/syntax.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tests/analysis/test_support.h"

namespace preflight::analysis {
namespace {

using testing::node_spanning;

// The S-expression of a tree, freed after copying.
std::string sexp(TSNode n) {
  char* s = ts_node_string(n);
  std::string out(s);
  std::free(s);
  return out;
}

// Every node in pre-order with its kind and exact position, to compare trees beyond shape.
std::vector<std::string> layout(TSNode root) {
  std::vector<std::string> out;
  TSTreeCursor c = ts_tree_cursor_new(root);
  for (;;) {
    TSNode n = ts_tree_cursor_current_node(&c);
    TSPoint sp = ts_node_start_point(n), ep = ts_node_end_point(n);
    out.push_back(std::string(ts_node_type(n)) + " " + std::to_string(ts_node_start_byte(n)) + "-" +
                  std::to_string(ts_node_end_byte(n)) + " (" + std::to_string(sp.row) + "," +
                  std::to_string(sp.column) + ")-(" + std::to_string(ep.row) + "," +
                  std::to_string(ep.column) + ")");
    if (ts_tree_cursor_goto_first_child(&c)) continue;
    bool moved = false;
    while (!(moved = ts_tree_cursor_goto_next_sibling(&c)))
      if (!ts_tree_cursor_goto_parent(&c)) break;
    if (!moved) break;
  }
  ts_tree_cursor_delete(&c);
  return out;
}

// Row and column (in bytes) of a byte offset, as tree-sitter counts them: rows split at \n.
TSPoint point_at(std::string_view text, uint32_t offset) {
  TSPoint p{0, 0};
  for (uint32_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++p.row;
      p.column = 0;
    } else {
      ++p.column;
    }
  }
  return p;
}

// The first statement's expression (`a.b.c` in "a.b.c\n").
TSNode first_expression(const SyntaxTree& t) {
  TSNode stmt = ts_node_named_child(t.root(), 0);
  return ts_node_named_child(stmt, 0);
}

// --- parsing and errors ---------------------------------------------------------------

TEST(SyntaxTest, ValidCodeHasNoSyntaxErrors) {
  std::string src =
      "import torch\n"
      "class Net(torch.nn.Module):\n"
      "    def forward(self, x):\n"
      "        return [v * 2 for v in x if v]\n"
      "with open('f') as fh, torch.no_grad():\n"
      "    y = lambda q: q ** 2\n"
      "match y:\n"
      "    case 1:\n"
      "        pass\n";
  SyntaxTree t = SyntaxTree::parse(src);
  EXPECT_EQ(ts_node_symbol(t.root()), kinds().module);
  SyntaxErrorSummary e = find_syntax_errors(t.root());
  EXPECT_EQ(e.count, 0u);
  EXPECT_FALSE(ts_node_has_error(t.root()));
}

TEST(SyntaxTest, EmptyTextParsesToAnEmptyModule) {
  SyntaxTree t = SyntaxTree::parse("");
  EXPECT_EQ(ts_node_symbol(t.root()), kinds().module);
  EXPECT_EQ(ts_node_named_child_count(t.root()), 0u);
  EXPECT_EQ(find_syntax_errors(t.root()).count, 0u);
}

TEST(SyntaxTest, BrokenFileReportsErrorsAndTheFirstRange) {
  std::string src =
      "x = 1\n"
      "def broken(:\n"
      "    pass\n"
      "y = 2\n";
  SyntaxTree t = SyntaxTree::parse(src);
  SyntaxErrorSummary e = find_syntax_errors(t.root());
  EXPECT_GT(e.count, 0u);
  // The first error lies on (or spans from) the broken `def` line, not the valid lines.
  uint32_t def_line = static_cast<uint32_t>(src.find("def broken"));
  uint32_t y_line = static_cast<uint32_t>(src.find("y = 2"));
  EXPECT_GE(e.first.begin, def_line);
  EXPECT_LT(e.first.begin, y_line);
  EXPECT_LE(e.first.begin, e.first.end);
  EXPECT_LE(e.first.end, src.size());
}

TEST(SyntaxTest, FirstErrorIsTheEarliestInTheFile) {
  std::string src =
      "a = (1,\n"
      "b = 2\n"
      "def ok():\n"
      "    return 1\n"
      "c = ]\n";
  SyntaxTree t = SyntaxTree::parse(src);
  SyntaxErrorSummary e = find_syntax_errors(t.root());
  ASSERT_GT(e.count, 0u);
  EXPECT_LT(e.first.begin, src.find("def ok"));
}

// CPython: "unindent does not match any outer indentation level". The grammar's scanner
// accepts the line and files it under some enclosing block, differently in a whole-file and
// a partial parse, so it is a syntax error here too.
TEST(SyntaxTest, AnUnindentToNoOuterLevelIsASyntaxError) {
  std::string src =
      "class A:\n"
      "    def test(self):\n"
      "          for d in ['cpu', 'cuda']:\n"
      "        y = x.cuda()\n";
  SyntaxTree t = SyntaxTree::parse(src);
  EXPECT_FALSE(ts_node_has_error(t.root()));  // the grammar alone accepts it
  ASSERT_TRUE(has_syntax_error(t.root()));
  SyntaxErrorSummary e = find_syntax_errors(t.root());
  EXPECT_EQ(e.count, 1u);
  EXPECT_EQ(e.first.begin, src.find("y = x.cuda()"));
  // The row a multi-line statement ends on is not the row of the next one.
  std::string after_brackets = "def f():\n    x = (1,\n  2)\n  y = 3\n";
  SyntaxTree u = SyntaxTree::parse(after_brackets);
  ASSERT_TRUE(misindented_statement(u.root()).has_value());
  EXPECT_EQ(misindented_statement(u.root())->begin, after_brackets.find("y = 3"));
}

// Indentation CPython accepts stays valid: a block on its header's line, statements after
// `;`, comments at any column, a line continuation before a blank line.
TEST(SyntaxTest, IndentationCPythonAcceptsIsNoError) {
  std::string src =
      "class A:\n"
      "    def f(self):\n"
      "        if x: y = 1; z = 2\n"
      "  # a comment at its own column\n"
      "        a = 1; b = 2\n"
      "        c = (1,\n"
      "  2); d = 3\n"  // after `;` on the row the bracket closes (CPython's inspect_fodder.py)
      "        return a, \\\n"
      "               b, \\\n"
      "\n"
      "    def g(self):\n"
      "            return 3\n";
  SyntaxTree t = SyntaxTree::parse(src);
  EXPECT_FALSE(misindented_statement(t.root()).has_value());
  EXPECT_FALSE(has_syntax_error(t.root()));
}

TEST(SyntaxTest, MissingTokenCountsAsAnError) {
  SyntaxTree t = SyntaxTree::parse("f(1, 2\n");
  EXPECT_GT(find_syntax_errors(t.root()).count, 0u);
}

TEST(SyntaxTest, SyntaxTreeIsMovable) {
  SyntaxTree a = SyntaxTree::parse("x = 1\n");
  SyntaxTree b = std::move(a);
  EXPECT_EQ(sexp(b.root()), "(module (expression_statement (assignment left: (identifier) right: (integer))))");
  SyntaxTree c = SyntaxTree::parse("y\n");
  c = std::move(b);
  EXPECT_EQ(ts_node_end_byte(c.root()), 6u);
}

// --- incremental re-parse ---------------------------------------------------------------

struct Edit {
  const char* what;
  uint32_t start;
  uint32_t old_len;
  std::string inserted;
};

// Applies `e` to `text` and returns the TSInputEdit describing it, with points in bytes
// computed from the old text (start, old end) and the new text (new end).
TSInputEdit apply_edit(std::string& text, const Edit& e) {
  std::string old = text;
  text.replace(e.start, e.old_len, e.inserted);
  TSInputEdit ie{};
  ie.start_byte = e.start;
  ie.old_end_byte = e.start + e.old_len;
  ie.new_end_byte = e.start + static_cast<uint32_t>(e.inserted.size());
  ie.start_point = point_at(old, ie.start_byte);
  ie.old_end_point = point_at(old, ie.old_end_byte);
  ie.new_end_point = point_at(text, ie.new_end_byte);
  return ie;
}

TEST(SyntaxTest, IncrementalReparseMatchesFreshParseAfterEachEdit) {
  std::string text =
      "import torch\n"
      "def train(model, total):\n"
      "    x = 1\n"
      "    y = 2\n"
      "    label = 'ok'\n"
      "    return total + x\n";
  SyntaxTree tree = SyntaxTree::parse(text);

  auto at = [&](std::string_view needle) { return static_cast<uint32_t>(text.find(needle)); };
  // Offsets are computed against the text as it is when each edit is applied.
  auto run = [&](Edit e) {
    TSInputEdit ie = apply_edit(text, e);
    tree.edit_and_reparse(ie, text);
    SyntaxTree fresh = SyntaxTree::parse(text);
    EXPECT_EQ(sexp(tree.root()), sexp(fresh.root())) << e.what << "\n" << text;
    EXPECT_EQ(layout(tree.root()), layout(fresh.root())) << e.what << "\n" << text;
    EXPECT_EQ(ts_node_end_byte(tree.root()), text.size()) << e.what;
  };

  run({"insert a character", at("1\n") + 1, 0, "2"});  // x = 12
  run({"delete a line", at("    y = 2\n"), static_cast<uint32_t>(std::string("    y = 2\n").size()), ""});
  run({"replace a word with a multi-byte word", at("total + x"), 5, "größe_历"});
  run({"replace in a string with multi-byte text", at("'ok'") + 1, 2, "😀 é"});
  run({"insert at the start", 0, 0, "import os\n"});
  run({"append at the end", static_cast<uint32_t>(text.size()), 0, "print('done')\n"});
  run({"break the syntax", at("def train(") + 9, 1, ""});
  run({"repair the syntax", at("def train") + 9, 0, "("});

  EXPECT_NE(text.find("größe_历"), std::string::npos);
  EXPECT_EQ(find_syntax_errors(tree.root()).count, 0u) << text;
}

TEST(SyntaxTest, IncrementalReparseAcrossCrLfLines) {
  std::string text = "a = 1\r\nb = 2\r\nc = 3\r\n";
  SyntaxTree tree = SyntaxTree::parse(text);
  Edit e{"insert a statement", static_cast<uint32_t>(text.find("b = 2")), 0, "z = [1,\r\n  2]\r\n"};
  TSInputEdit ie = apply_edit(text, e);
  tree.edit_and_reparse(ie, text);
  SyntaxTree fresh = SyntaxTree::parse(text);
  EXPECT_EQ(sexp(tree.root()), sexp(fresh.root()));
  EXPECT_EQ(layout(tree.root()), layout(fresh.root()));
}

// --- node helpers -------------------------------------------------------------------------

TEST(SyntaxTest, DottedNameOfAttributeChain) {
  std::string src = "a.b.c\n";
  SyntaxTree t = SyntaxTree::parse(src);
  EXPECT_EQ(dotted_name(first_expression(t), src), "a.b.c");
}

TEST(SyntaxTest, DottedNameOfIdentifier) {
  std::string src = "abc\n";
  SyntaxTree t = SyntaxTree::parse(src);
  EXPECT_EQ(dotted_name(first_expression(t), src), "abc");
}

TEST(SyntaxTest, DottedNameIsNulloptForCallsSubscriptsAndOthers) {
  for (std::string src : {"a.b()\n", "a().b\n", "a[0].b\n", "(a + b).c\n", "1\n"}) {
    SyntaxTree t = SyntaxTree::parse(src);
    EXPECT_EQ(dotted_name(first_expression(t), src), std::nullopt) << src;
  }
}

TEST(SyntaxTest, DottedNameOfNullNodeIsNullopt) {
  EXPECT_EQ(dotted_name(TSNode{}, "x"), std::nullopt);
}

TEST(SyntaxTest, BaseNameLooksThroughAttributesSubscriptsAndCalls) {
  struct Case {
    std::string src;
    std::optional<std::string> base;
  };
  for (const Case& c : std::vector<Case>{{"self.buf[0].x\n", "self"},
                                         {"model(x).logits\n", "model"},
                                         {"a.b.c\n", "a"},
                                         {"(net).fc(x)[1]\n", "net"},
                                         {"q\n", "q"},
                                         {"(1 + 2).x\n", std::nullopt},
                                         {"'s'.join(x)\n", std::nullopt}}) {
    SyntaxTree t = SyntaxTree::parse(c.src);
    EXPECT_EQ(base_name(first_expression(t), c.src), c.base) << c.src;
  }
}

TEST(SyntaxTest, CalleeLeafIsTheLastSegment) {
  struct Case {
    std::string src;
    std::string leaf;
  };
  for (const Case& c : std::vector<Case>{{"F.cross_entropy(x, y)\n", "cross_entropy"},
                                         {"model(x)\n", "model"},
                                         {"a.b.c.d()\n", "d"},
                                         {"nn.Sigmoid()(x)\n", ""},
                                         {"fs[0](x)\n", ""}}) {
    SyntaxTree t = SyntaxTree::parse(c.src);
    TSNode call = first_expression(t);
    ASSERT_EQ(ts_node_symbol(call), kinds().call) << c.src;
    EXPECT_EQ(callee_leaf(call, c.src), c.leaf) << c.src;
  }
}

TEST(SyntaxTest, PositionalArgSkipsKeywordsAndSplats) {
  std::string src = "f(a, *rest, b, k=1, **kw)\n";
  SyntaxTree t = SyntaxTree::parse(src);
  TSNode call = first_expression(t);
  EXPECT_EQ(text_of(positional_arg(call, 0), src), "a");
  EXPECT_EQ(text_of(positional_arg(call, 1), src), "b");
  EXPECT_TRUE(ts_node_is_null(positional_arg(call, 2)));
}

TEST(SyntaxTest, PositionalArgSkipsAKeywordBeforeIt) {
  // Not valid Python, but tree-sitter parses it and the helper must still skip `dim=1`.
  std::string src = "g(k=1, x)\n";
  SyntaxTree t = SyntaxTree::parse(src);
  TSNode call = first_expression(t);
  EXPECT_EQ(text_of(positional_arg(call, 0), src), "x");
}

TEST(SyntaxTest, PositionalArgSkipsComments) {
  std::string src = "f(\n  # first\n  a,\n  b,  # second\n)\n";
  SyntaxTree t = SyntaxTree::parse(src);
  TSNode call = first_expression(t);
  EXPECT_EQ(text_of(positional_arg(call, 0), src), "a");
  EXPECT_EQ(text_of(positional_arg(call, 1), src), "b");
  EXPECT_TRUE(ts_node_is_null(positional_arg(call, 2)));
}

TEST(SyntaxTest, PositionalArgOfGeneratorArgumentIsNull) {
  std::string src = "sum(x for x in y)\n";
  SyntaxTree t = SyntaxTree::parse(src);
  EXPECT_TRUE(ts_node_is_null(positional_arg(first_expression(t), 0)));
}

TEST(SyntaxTest, KeywordArgFindsValueByName) {
  std::string src = "f(x, dim=1, create_graph=True, flag=flag)\n";
  SyntaxTree t = SyntaxTree::parse(src);
  TSNode call = first_expression(t);
  EXPECT_EQ(text_of(keyword_arg(call, "dim", src), src), "1");
  EXPECT_EQ(text_of(keyword_arg(call, "flag", src), src), "flag");
  EXPECT_TRUE(ts_node_is_null(keyword_arg(call, "missing", src)));
  EXPECT_TRUE(ts_node_is_null(keyword_arg(call, "x", src)));  // positional, not a keyword
  EXPECT_TRUE(has_literal_true_keyword(call, "create_graph", src));
  EXPECT_FALSE(has_literal_true_keyword(call, "flag", src));
  EXPECT_FALSE(has_literal_true_keyword(call, "dim", src));
  EXPECT_FALSE(has_literal_true_keyword(call, "missing", src));
}

TEST(SyntaxTest, QuoteCodeCutsOnACharacterBoundary) {
  EXPECT_EQ(quote_code("a\nb", 10), "`a b`");
  EXPECT_EQ(quote_code("abcdef", 3), "`abc...`");
  // "é" is two bytes (C3 A9); a cut after the third byte would split it.
  std::string quoted = quote_code("abé", 3);
  EXPECT_EQ(quoted, "`ab...`");
  EXPECT_EQ(quote_code("abé", 4), "`abé`");
  EXPECT_EQ(quote_code("€€", 4), "`€...`");  // three bytes each
}

TEST(SyntaxTest, UnparenthesizeStripsRedundantParentheses) {
  std::string src = "((x))\n";
  SyntaxTree t = SyntaxTree::parse(src);
  TSNode inner = unparenthesize(first_expression(t));
  EXPECT_EQ(ts_node_symbol(inner), kinds().identifier);
  EXPECT_EQ(text_of(inner, src), "x");
}

TEST(SyntaxTest, UnparenthesizeLeavesTuplesAndPlainNodes) {
  std::string src = "(x, y)\n";
  SyntaxTree t = SyntaxTree::parse(src);
  TSNode tuple = first_expression(t);
  EXPECT_TRUE(ts_node_eq(unparenthesize(tuple), tuple));
  std::string src2 = "a + b\n";
  SyntaxTree t2 = SyntaxTree::parse(src2);
  TSNode bin = first_expression(t2);
  EXPECT_TRUE(ts_node_eq(unparenthesize(bin), bin));
  std::string src3 = "(a + b)\n";
  SyntaxTree t3 = SyntaxTree::parse(src3);
  EXPECT_EQ(text_of(unparenthesize(first_expression(t3)), src3), "a + b");
}

TEST(SyntaxTest, TextOfNullNodeIsEmpty) {
  EXPECT_EQ(text_of(TSNode{}, "abc"), "");
}

TEST(SyntaxTest, NodeSpanningFindsTheSmallestNamedNodeWithThatText) {
  std::string src = "y = model(x).item()\n";
  SyntaxTree t = SyntaxTree::parse(src);
  TSNode call = node_spanning(t.root(), src, static_cast<uint32_t>(src.find("model")), "model(x)");
  ASSERT_FALSE(ts_node_is_null(call));
  EXPECT_EQ(ts_node_symbol(call), kinds().call);
  TSNode ident = node_spanning(t.root(), src, static_cast<uint32_t>(src.find("model")), "model");
  EXPECT_EQ(ts_node_symbol(ident), kinds().identifier);
}


// --- children in one pass -----------------------------------------------------------------

// pf_tree_scan must see what a tree cursor sees: as many nodes, as deep, and the same nodes
// of a kind in the same order (comments, which are extras, and identifiers, which are many
// and sometimes aliased).
void expect_scan_matches_cursor_walk(TSNode root, const std::string& label) {
  for (TSSymbol symbol : {kinds().comment, kinds().identifier, kinds().call}) {
    std::vector<TSNode> expected;
    uint32_t count = 0, depth = 0;
    for_each_node(root, [&](TSNode n, uint32_t d) {
      ++count;
      depth = std::max(depth, d);
      if (ts_node_symbol(n) == symbol) expected.push_back(n);
    });
    NodesOfKind scanned = scan_nodes_of_kind(root, symbol);
    ASSERT_EQ(scanned.shape.node_count, count) << label;
    ASSERT_EQ(scanned.shape.max_depth, depth) << label;
    ASSERT_EQ(scanned.nodes.size(), expected.size()) << label << " " << ts_language_symbol_name(tree_sitter_python(), symbol);
    for (size_t i = 0; i < expected.size(); ++i)
      ASSERT_TRUE(ts_node_eq(scanned.nodes[i], expected[i])) << label << " match " << i;
  }
}

// Every node's children as Children gathers them must be ts_node_child(n, i) /
// ts_node_named_child(n, i), in order, field(n, f) must be ts_node_child_by_field_id and sym(n)
// ts_node_symbol: the one-pass gatherer and the symbol read use the runtime's private layout
// (ts_children.c), and this is what holds them to the public API after an upgrade.
void expect_children_match_public_api(TSNode root, const std::string& label) {
  size_t checked = 0;
  const auto field_count = static_cast<TSFieldId>(ts_language_field_count(tree_sitter_python()));
  ParentIndex parents(root);
  for_each_node(root, [&](TSNode n, uint32_t) {
    ASSERT_EQ(sym(n), ts_node_symbol(n)) << label << " " << ts_node_type(n) << " at " << ts_node_start_byte(n);
    ASSERT_TRUE(ts_node_eq(parents.parent(n), ts_node_parent(n))) << label << " parent of " << sexp(n);
    Children all = all_children(n), named = named_children(n);
    ASSERT_EQ(all.size(), ts_node_child_count(n)) << label << " at " << ts_node_start_byte(n);
    ASSERT_EQ(named.size(), ts_node_named_child_count(n)) << label << " at " << ts_node_start_byte(n);
    for (uint32_t i = 0; i < all.size(); ++i)
      ASSERT_TRUE(ts_node_eq(all[i], ts_node_child(n, i))) << label << " child " << i << " of " << sexp(n);
    for (uint32_t i = 0; i < named.size(); ++i)
      ASSERT_TRUE(ts_node_eq(named[i], ts_node_named_child(n, i)))
          << label << " named child " << i << " of " << sexp(n);
    for (TSFieldId f = 1; f <= field_count; ++f)
      ASSERT_TRUE(ts_node_eq(field(n, f), ts_node_child_by_field_id(n, f)))
          << label << " field " << ts_language_field_name_for_id(tree_sitter_python(), f) << " of " << sexp(n);
    ++checked;
  });
  EXPECT_GT(checked, 0u);
  expect_scan_matches_cursor_walk(root, label);
}

TEST(SyntaxTest, ChildrenInOnePassAreThePublicApisChildren) {
  // Long blocks (more children than the inline buffer), hidden rules flattened into their
  // parent, aliases, comments (extras) between children, and syntax errors.
  std::string src =
      "import torch as t, os\n"
      "from a.b import (c, d as e,)\n"
      "@decorator(1)\n"
      "class M(t.nn.Module):\n"
      "    def forward(self, x, *args, y: int = 2, **kw) -> t.Tensor:  # note\n"
      "        a, (b, *c) = x  # unpack\n"
      "        print(f'{a!r:>{b}}', *c, sep='')\n"
      "        return [i * 2 for i in range(10) if i] or {k: v for k, v in kw.items()}\n"
      "match x:\n"
      "    case [1, *rest] if rest: pass\n"
      "    case {'k': v, **others}: pass\n"
      "with open(p) as f, g() as (h, i):\n"
      "    del f[1:2, ::3]\n"
      "lambda q=1, /, *, r: q\n"
      "x = (yield)\n"
      "def broken(:\n"
      "    return )\n";
  for (int i = 0; i < 40; ++i) src += "s" + std::to_string(i) + " = " + std::to_string(i) + "  # c\n";
  expect_children_match_public_api(SyntaxTree::parse(src).root(), "inline source");
}

TEST(SyntaxTest, TheParentIndexAnswersAsTsNodeParentInALargeClass) {
  // The shape it exists for (issue 24): hundreds of methods in one class body, where
  // ts_node_parent scans the members; every node's parent, and the root's (none).
  std::string src = "class Trainer:\n";
  for (int i = 0; i < 300; ++i)
    src += "    def m" + std::to_string(i) + "(self, x):\n        return self.f(x)[" + std::to_string(i) + "]  # c\n";
  SyntaxTree t = SyntaxTree::parse(src);
  ParentIndex parents(t.root());
  size_t checked = 0;
  for_each_node(t.root(), [&](TSNode n, uint32_t) {
    ASSERT_TRUE(ts_node_eq(parents.parent(n), ts_node_parent(n))) << "parent of " << sexp(n);
    ++checked;
  });
  EXPECT_GT(checked, 300u * 10);
  EXPECT_TRUE(is_null(parents.parent(t.root())));
  // A node of another tree of the same text is answered from that tree, not the index.
  SyntaxTree other = SyntaxTree::parse(src);
  TSNode method = ts_node_named_child(field(ts_node_named_child(other.root(), 0), kinds().f_body), 7);
  EXPECT_TRUE(ts_node_eq(parents.parent(method), ts_node_parent(method)));
}

TEST(SyntaxTest, TreeScanHandlesNestingDeeperThanItsInlineStack) {
  std::string src = "x = " + std::string(300, '(') + "1  # deep\n" + std::string(300, ')') + "\n";
  SyntaxTree t = SyntaxTree::parse(src);
  expect_scan_matches_cursor_walk(t.root(), "deep parentheses");
  EXPECT_GT(scan_nodes_of_kind(t.root(), kinds().comment).shape.max_depth, 300u);
}

size_t expect_children_match_under(const std::filesystem::path& dir) {
  size_t files = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    if (entry.path().extension() != ".py" || !entry.is_regular_file()) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    expect_children_match_public_api(SyntaxTree::parse(text).root(), entry.path().string());
    ++files;
  }
  return files;
}

TEST(SyntaxTest, ChildrenInOnePassMatchOnEveryFixture) {
  EXPECT_GT(expect_children_match_under(PF_TEST_FIXTURES), 50u);
}

// Opt-in, like the incremental differential: PF_DIFFERENTIAL_CORPUS=/path/to/python/tree.
TEST(SyntaxTest, ChildrenInOnePassMatchOnARealCorpus) {
  const char* corpus = std::getenv("PF_DIFFERENTIAL_CORPUS");
  if (!corpus) GTEST_SKIP() << "set PF_DIFFERENTIAL_CORPUS to a directory of Python files";
  EXPECT_GT(expect_children_match_under(corpus), 0u);
}

}  // namespace
}  // namespace preflight::analysis
