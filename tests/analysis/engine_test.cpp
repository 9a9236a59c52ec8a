#include "rules/engine.h"

#include "analysis/grammar_gaps.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <ostream>
#include <set>
#include <string>

namespace preflight::rules {

// Readable gtest output for file statuses.
void PrintTo(FileStatus s, std::ostream* os) {
  switch (s) {
    case FileStatus::Analyzed: *os << "FileStatus::Analyzed"; return;
    case FileStatus::SkippedFile: *os << "FileStatus::SkippedFile"; return;
    case FileStatus::NotText: *os << "FileStatus::NotText"; return;
    case FileStatus::TooComplex: *os << "FileStatus::TooComplex"; return;
  }
  *os << "FileStatus(?)";
}

namespace {

using analysis::Finding;
using analysis::ByteRange;

// One snippet with a finding of each rule: TG002 in `evaluate` (no no_grad), TG003 and
// TG001 in `train` (no zero_grad; the loss kept with its graph).
const std::string kAllRules =
    "import torch\n"
    "import torch.nn.functional as F\n"
    "\n"
    "def evaluate(model, loader):\n"
    "    model.eval()\n"
    "    correct = 0\n"
    "    for xb, yb in loader:\n"
    "        logits = model(xb)\n"
    "        correct += (logits.argmax(dim=1) == yb).sum().item()\n"
    "    return correct\n"
    "\n"
    "def train(model, loader, optimizer):\n"
    "    history = []\n"
    "    for xb, yb in loader:\n"
    "        loss = F.cross_entropy(model(xb), yb)\n"
    "        loss.backward()\n"
    "        optimizer.step()\n"
    "        history.append(loss)\n"
    "    return history\n";

const std::string kFit =
    "def fit(net, loader, loss_fn, optimizer):\n"
    "    for xb, yb in loader:\n"
    "        loss_fn(net(xb), yb).backward()\n"
    "        optimizer.step()\n";

std::multiset<std::string> codes(const CheckResult& r) {
  std::multiset<std::string> out;
  for (const Finding& f : r.findings) out.insert(f.code);
  return out;
}

std::string describe(const CheckResult& r) {
  std::string s;
  for (const Finding& f : r.findings)
    s += f.code + " @" + std::to_string(f.range.begin) + "-" + std::to_string(f.range.end) + ": " +
         f.message + "\n";
  for (const SyntaxError& e : r.syntax_errors)
    s += "syntax error @" + std::to_string(e.range.begin) + "-" + std::to_string(e.range.end) +
         ": " + e.message + "\n";
  return s;
}

bool has_syntax_error_containing(const CheckResult& r, std::string_view text) {
  return std::any_of(r.syntax_errors.begin(), r.syntax_errors.end(),
                     [&](const SyntaxError& e) { return e.message.find(text) != std::string::npos; });
}

TEST(EngineTest, AllRulesSnippetReportsEachRule) {
  CheckResult r = check_source(kAllRules, {});
  EXPECT_EQ(r.status, FileStatus::Analyzed);
  EXPECT_TRUE(r.syntax_errors.empty());
  std::multiset<std::string> c = codes(r);
  EXPECT_EQ(c.count("TG001"), 1u) << describe(r);
  EXPECT_EQ(c.count("TG002"), 1u) << describe(r);
  EXPECT_EQ(c.count("TG003"), 1u) << describe(r);
}

TEST(EngineTest, EmptyFileHasNoFindings) {
  CheckResult r = check_source("", {});
  EXPECT_EQ(r.status, FileStatus::Analyzed);
  EXPECT_TRUE(r.findings.empty());
  EXPECT_TRUE(r.syntax_errors.empty());
}

TEST(EngineTest, InvalidUtf8IsNotText) {
  CheckResult r = check_source("x = '\xFF'\n" + kFit, {});
  EXPECT_EQ(r.status, FileStatus::NotText);
  EXPECT_FALSE(r.status_reason.empty());
  EXPECT_NE(r.status_reason.find("UTF-8"), std::string::npos) << r.status_reason;
  EXPECT_TRUE(r.findings.empty());
}

TEST(EngineTest, MalformedSequencesAreNotText) {
  for (std::string bad : {std::string("x = '\xC0\xAF'\n"),      // overlong 2-byte '/'
                          std::string("x = '\xF5\x80\x80\x80'\n"),  // lead byte above F4
                          std::string("x = '\x80'\n"),          // stray continuation
                          std::string("x = '\xE5\x8E'\n"),      // truncated
                          std::string("x = 1\n\xE5")}) {        // truncated at the end
    CheckResult r = check_source(bad, {});
    EXPECT_EQ(r.status, FileStatus::NotText) << ::testing::PrintToString(bad);
  }
}

// UTF-8 (RFC 3629) also forbids non-shortest 3- and 4-byte forms, UTF-16 surrogates and
// code points above U+10FFFF, all of which have valid-looking lead and continuation bytes.
TEST(EngineTest, NonShortestFormsSurrogatesAndOutOfRangeCodePointsAreNotText) {
  for (std::string bad : {std::string("x = '\xE0\x80\xAF'\n"),      // overlong 3-byte '/'
                          std::string("x = '\xF0\x80\x80\xAF'\n"),  // overlong 4-byte '/'
                          std::string("x = '\xED\xA0\x80'\n"),      // surrogate U+D800
                          std::string("x = '\xF4\x90\x80\x80'\n")}) {  // U+110000
    CheckResult r = check_source(bad, {});
    EXPECT_EQ(r.status, FileStatus::NotText) << ::testing::PrintToString(bad);
  }
}

TEST(EngineTest, ValidMultiByteTextIsAnalyzed) {
  CheckResult r = check_source("# é 历 😀\n" + kFit, {});
  EXPECT_EQ(r.status, FileStatus::Analyzed);
  EXPECT_EQ(codes(r).count("TG003"), 1u);
}

std::string with_line_endings(std::string_view text, std::string_view eol) {
  std::string out;
  for (char c : text) {
    if (c == '\n') out += eol;
    else out += c;
  }
  return out;
}

TEST(EngineTest, CrLfFileIsAnalyzedLikeLf) {
  CheckResult r = check_source(with_line_endings(kFit, "\r\n"), {});
  EXPECT_TRUE(r.syntax_errors.empty()) << describe(r);
  EXPECT_EQ(codes(r).count("TG003"), 1u) << describe(r);
}

TEST(EngineTest, LoneCrFileIsAnalyzedLikeLf) {
  // Python reads a lone \r as a line break (and LineIndex splits there too).
  CheckResult r = check_source(with_line_endings(kFit, "\r"), {});
  EXPECT_TRUE(r.syntax_errors.empty()) << describe(r);
  EXPECT_EQ(codes(r).count("TG003"), 1u) << describe(r);
}

TEST(EngineTest, ByteOrderMarkIsNotASyntaxError) {
  CheckResult r = check_source("\xEF\xBB\xBF" + kFit, {});
  EXPECT_EQ(r.status, FileStatus::Analyzed);
  EXPECT_TRUE(r.syntax_errors.empty()) << describe(r);
  EXPECT_EQ(codes(r).count("TG003"), 1u) << describe(r);
}

TEST(EngineTest, NulByteIsNotText) {
  std::string src = kFit + std::string(1, '\0') + "x = 1\n";
  CheckResult r = check_source(src, {});
  EXPECT_EQ(r.status, FileStatus::NotText);
  EXPECT_NE(r.status_reason.find("NUL"), std::string::npos) << r.status_reason;
  EXPECT_TRUE(r.findings.empty());
}

TEST(EngineTest, SkipFileMarkerSkipsTheFile) {
  CheckResult r = check_source("# preflight: skip-file\n" + kAllRules, {});
  EXPECT_EQ(r.status, FileStatus::SkippedFile);
  EXPECT_TRUE(r.findings.empty());
}

TEST(EngineTest, SkipFileMarkerAtTheEndSkipsTheFile) {
  CheckResult r = check_source(kAllRules + "# torch-preflight: skip_file\n", {});
  EXPECT_EQ(r.status, FileStatus::SkippedFile);
  EXPECT_TRUE(r.findings.empty());
}

TEST(EngineTest, SyntaxErrorInOneFunctionStillReportsAnother) {
  std::string src =
      "def broken(:\n"
      "    pass\n"
      "\n" +
      kFit;
  CheckResult r = check_source(src, {});
  EXPECT_EQ(r.status, FileStatus::Analyzed);
  ASSERT_FALSE(r.syntax_errors.empty());
  EXPECT_LT(r.syntax_errors[0].range.begin, src.find("def fit"));
  ASSERT_EQ(codes(r).count("TG003"), 1u) << describe(r);
  for (const Finding& f : r.findings) {
    if (f.code == "TG003") {
      EXPECT_GT(f.range.begin, src.find("def fit"));
    }
  }
}

TEST(EngineTest, SyntaxErrorAfterAFunctionStillReportsIt) {
  std::string src = kFit + "\nx = (1,\ny = ]\n";
  CheckResult r = check_source(src, {});
  EXPECT_FALSE(r.syntax_errors.empty());
  EXPECT_EQ(codes(r).count("TG003"), 1u) << describe(r);
}

// Valid Python that tree-sitter-python 0.25.0 reports as an ERROR (issue 26): a star before
// anything but a name, attribute or subscript in an unparenthesised tuple. The first two are
// lines of real code (a fine-tuning library, PyTorch's own tree).
TEST(EngineTest, StarredTupleElementsTheGrammarCannotReadAreNotSyntaxErrors) {
  for (const std::string src : {
           "def f(x, ys):\n    return x, *(y for y in ys)\n",
           "endpoint = 'h'\nhost, *rest = endpoint, *[]\n",
           "def g(a, b):\n    yield a, *b()\n    a += 1, *(b)\n    x = y = a, *[b], *{b}, *'s'\n"
           "    for q in a, *(b): pass\n    return a, *(b) * 2, *-a\n",
       }) {
    CheckResult r = check_source(src, {});
    EXPECT_EQ(r.status, FileStatus::Analyzed) << src;
    EXPECT_TRUE(r.syntax_errors.empty()) << describe(r) << src;
    ASSERT_FALSE(r.grammar_gaps.empty()) << src;
    for (ByteRange star : r.grammar_gaps) EXPECT_EQ(src.substr(star.begin, star.end - star.begin), "*") << src;
  }
}

TEST(EngineTest, AFileWithAGrammarGapIsStillAnalysed) {
  std::string src = "def tail(x, ys):\n    return x, *(y for y in ys)\n\n" + kFit;
  CheckResult r = check_source(src, {});
  EXPECT_TRUE(r.syntax_errors.empty()) << describe(r);
  EXPECT_EQ(r.grammar_gaps.size(), 1u);
  EXPECT_EQ(codes(r).count("TG003"), 1u) << describe(r);
}

// A starred reference in redundant parentheses where the grammar takes a starred name, also as
// an unpacking target and at the start of a line (CPython's own Lib/ has both): the
// parentheses are read through, the star stays where it is (issue 26).
TEST(EngineTest, AStarredReferenceInRedundantParenthesesIsNotASyntaxError) {
  for (const std::string src : {
           "def f(a):\n    *(a), b = g()\n    return a, b\n",
           "x, *(y) = [1, 2]\n",
           "def f(a):\n    x, *(a.b[0]) = g()\n    for *(p), q in r:\n        pass\n    return [*(a), *(x[1:2])]\n",
       }) {
    CheckResult r = check_source(src, {});
    EXPECT_EQ(r.status, FileStatus::Analyzed) << src;
    EXPECT_TRUE(r.syntax_errors.empty()) << describe(r) << src;
    ASSERT_FALSE(r.grammar_gaps.empty()) << src;
    for (ByteRange star : r.grammar_gaps) EXPECT_EQ(src.substr(star.begin, star.end - star.begin), "*") << src;
  }
  // `*(a)` alone is no element of a tuple (CPython's compiler refuses it): still an error.
  for (const std::string src : {"*(a)\n", "def f(a):\n    del x, *(a)\n"}) {
    CheckResult r = check_source(src, {});
    EXPECT_FALSE(r.syntax_errors.empty()) << src;
  }
}

// Inside brackets, a continuation line indented less than its statement is joined as CPython
// joins it (its own test_compile.py has `(bar.\n        baz)` below a deeper statement); the
// file is analysed, with every finding where it is. A real error in such a text stays one.
TEST(EngineTest, AShallowContinuationLineInsideBracketsIsNotASyntaxError) {
  const std::string shallow = "def f(bar):\n    if bar:\n        x = (bar.\n    baz)\n        y = [bar +\n  1,\n\n 2]\n    return x\n\n";
  CheckResult r = check_source(shallow + kFit, {});
  EXPECT_EQ(r.status, FileStatus::Analyzed);
  EXPECT_TRUE(r.syntax_errors.empty()) << describe(r);
  EXPECT_EQ(r.grammar_gaps.size(), 3u);  // `bar.` / `bar +` / the blank line before ` 2]`
  ASSERT_EQ(codes(r).count("TG003"), 1u) << describe(r);
  CheckResult alone = check_source(kFit, {});
  ASSERT_EQ(alone.findings.size(), 1u);
  EXPECT_EQ(r.findings[0].range.begin, alone.findings[0].range.begin + shallow.size());
  for (const std::string broken : {"def f(bar):\n    x = (bar.\n  baz\n    return x\n",
                                   "def f(bar):\n    x = (bar +  # note\n  baz)\n    return x\n"}) {
    CheckResult b = check_source(broken, {});
    EXPECT_FALSE(b.syntax_errors.empty()) << broken;
  }
}

// A bracket left open while typing (`print(` above the rest of the file) makes the text
// unparsable whatever its line breaks are: the shallow lines inside it are not read through,
// and only a group that closes keeps its break.
TEST(EngineTest, ShallowLinesInsideABracketTheTextNeverClosesAreNotReadThrough) {
  const std::string closed = "def g(bar):\n    x = (bar.\n  baz)\n    return x\n";
  const std::string open = "def f(bar):\n    print(bar.\n  baz,\n\ny = 1\n";
  std::vector<analysis::ByteRange> breaks = analysis::shallow_continuation_breaks(closed + open);
  ASSERT_EQ(breaks.size(), 1u);
  EXPECT_EQ(breaks[0].begin, closed.find("\n  baz"));
  EXPECT_TRUE(analysis::shallow_continuation_breaks(open).empty());
  CheckResult r = check_source(closed + open, {});
  EXPECT_FALSE(r.syntax_errors.empty()) << describe(r);
  EXPECT_TRUE(r.grammar_gaps.empty());
}

// Where CPython does not take a starred element, the star stays a syntax error.
TEST(EngineTest, StarsCPythonRejectsStaySyntaxErrors) {
  for (const std::string line : {"del a, *(b)", "x = a, *not b", "x = a, *(b) < c", "x = a, *lambda: b",
                                 "x = 1, * *a", "x = a, *(b) if c else d", "x = a, *(b) := c"}) {
    std::string src = "def f(a, b, c):\n    " + line + "\n";
    CheckResult r = check_source(src, {});
    EXPECT_FALSE(r.syntax_errors.empty()) << line;
    EXPECT_TRUE(r.grammar_gaps.empty()) << line;
  }
}

// A real syntax error next to a gap is reported where it is, not at the star before it.
TEST(EngineTest, ARealSyntaxErrorNextToAGrammarGapIsReportedWhereItIs) {
  std::string src = "def f(a, b):\n    x = a, *(b)\n    return 1, *[x]\n    def g(:\n        pass\n";
  CheckResult r = check_source(src, {});
  ASSERT_FALSE(r.syntax_errors.empty()) << describe(r);
  EXPECT_GE(r.syntax_errors[0].range.begin, src.find("def g")) << describe(r);
  EXPECT_EQ(r.grammar_gaps.size(), 2u);
}

TEST(EngineTest, DeeplyNestedParenthesesAreRefusedWithoutCrashing) {
  std::string src = "x = " + std::string(5000, '(') + "1" + std::string(5000, ')') + "\n";
  CheckResult r = check_source(src, {});
  EXPECT_EQ(r.status, FileStatus::Analyzed);
  EXPECT_TRUE(has_syntax_error_containing(r, "too deeply nested")) << describe(r);
  EXPECT_TRUE(r.findings.empty());
}

TEST(EngineTest, DeeplyNestedListsCallsAndUnaryOperatorsAreRefusedWithoutCrashing) {
  std::string lists = "x = " + std::string(5000, '[') + std::string(5000, ']') + "\n";
  std::string calls;
  for (int i = 0; i < 5000; ++i) calls += "f(";
  calls += "1" + std::string(5000, ')') + "\n";
  std::string unary = "x = " + std::string(5000, '-') + "1\n";
  std::string sum = "x = 1";
  for (int i = 0; i < 20000; ++i) sum += " + 1";
  sum += "\n";
  for (const std::string* src : {&lists, &calls, &unary, &sum}) {
    CheckResult r = check_source(*src, {});
    EXPECT_TRUE(has_syntax_error_containing(r, "too deeply nested")) << src->substr(0, 40);
  }
}

TEST(EngineTest, DeeplyNestedBlocksAreRefusedWithoutCrashing) {
  std::string src;
  for (int depth = 0; depth < 300; ++depth) src += std::string(depth, ' ') + "if x:\n";
  src += std::string(300, ' ') + "pass\n";
  CheckResult r = check_source(src, {});
  EXPECT_EQ(r.status, FileStatus::Analyzed);
  EXPECT_TRUE(has_syntax_error_containing(r, "too deeply nested")) << describe(r);
}

TEST(EngineTest, DeepNestingInsideAnUnclosedBracketDoesNotCrash) {
  std::string src = kFit + "y = " + std::string(5000, '(') + "\n";
  CheckResult r = check_source(src, {});
  EXPECT_FALSE(r.syntax_errors.empty());
}

TEST(EngineTest, TenMegabyteFileCompletes) {
  std::string src = "import torch\n";
  int functions = 0;
  while (src.size() < 10u * 1024 * 1024) {
    std::string n = std::to_string(functions++);
    src += "def fit_" + n + "(net_" + n + ", loader, loss_fn, optimizer):\n"
           "    for xb, yb in loader:\n"
           "        out_" + n + " = net_" + n + "(xb)\n"
           "        loss_fn(out_" + n + ", yb).backward()\n"
           "        optimizer.step()\n"
           "\n";
  }
  CheckResult r = check_source(src, {});
  EXPECT_EQ(r.status, FileStatus::Analyzed);  // under the default node limit
  EXPECT_TRUE(r.syntax_errors.empty());
  // Every copy lacks zero_grad.
  EXPECT_EQ(codes(r).count("TG003"), static_cast<size_t>(functions));
}

TEST(EngineTest, SelectKeepsOnlySelectedCodes) {
  CheckOptions o;
  o.select = {"TG003"};
  CheckResult r = check_source(kAllRules, o);
  EXPECT_EQ(codes(r), (std::multiset<std::string>{"TG003"})) << describe(r);
}

TEST(EngineTest, IgnoreDropsCodes) {
  CheckOptions o;
  o.ignore = {"TG003", "TG001"};
  CheckResult r = check_source(kAllRules, o);
  EXPECT_EQ(codes(r), (std::multiset<std::string>{"TG002"})) << describe(r);
}

TEST(EngineTest, IgnoreWinsOverSelect) {
  CheckOptions o;
  o.select = {"TG003", "TG002"};
  o.ignore = {"TG003"};
  CheckResult r = check_source(kAllRules, o);
  EXPECT_EQ(codes(r), (std::multiset<std::string>{"TG002"})) << describe(r);
}

TEST(EngineTest, SelectingAnUnknownCodeRunsNothing) {
  CheckOptions o;
  o.select = {"TG999"};
  EXPECT_TRUE(check_source(kAllRules, o).findings.empty());
}

TEST(EngineTest, FindingsAreSortedByPosition) {
  // Rules run in code order (TG001 in `train` is found before TG002 in `evaluate`, which
  // comes first in the file), so only sorting puts them in source order.
  std::string src = kAllRules + "\n" + kFit;
  CheckResult r = check_source(src, {});
  ASSERT_GE(r.findings.size(), 4u) << describe(r);
  for (size_t i = 1; i < r.findings.size(); ++i) {
    const Finding& a = r.findings[i - 1];
    const Finding& b = r.findings[i];
    EXPECT_TRUE(a.range.begin < b.range.begin ||
                (a.range.begin == b.range.begin && a.code <= b.code))
        << describe(r);
  }
}

TEST(EngineTest, FindingRangesLieInsideTheText) {
  CheckResult r = check_source(kAllRules, {});
  for (const Finding& f : r.findings) {
    EXPECT_LE(f.range.begin, f.range.end);
    EXPECT_LE(f.range.end, kAllRules.size());
    EXPECT_FALSE(f.message.empty()) << f.code;
    for (const analysis::EvidenceStep& e : f.evidence) EXPECT_LE(e.range.end, kAllRules.size());
    for (const analysis::Fix& fix : f.fixes)
      for (const analysis::TextEdit& e : fix.edits) EXPECT_LE(e.range.end, kAllRules.size());
  }
}

std::string serialize(const CheckResult& r) {
  std::string s = std::to_string(static_cast<int>(r.status)) + "|" + r.status_reason + "\n";
  for (const Finding& f : r.findings) {
    s += f.code + "|" + std::to_string(static_cast<int>(f.severity)) + "|" +
         std::to_string(static_cast<int>(f.category)) + "|" + std::to_string(f.range.begin) + "-" +
         std::to_string(f.range.end) + "|" + f.message + "|" + f.hint + "\n";
    for (const analysis::EvidenceStep& e : f.evidence)
      s += "  ev " + std::to_string(e.range.begin) + "-" + std::to_string(e.range.end) + " " + e.message + "\n";
    for (const analysis::Fix& fix : f.fixes) {
      s += "  fix " + fix.description + " " + std::to_string(static_cast<int>(fix.safety)) + "\n";
      for (const analysis::TextEdit& e : fix.edits)
        s += "    " + std::to_string(e.range.begin) + "-" + std::to_string(e.range.end) + " " +
             e.replacement + "\n";
    }
  }
  for (const SyntaxError& e : r.syntax_errors)
    s += "syntax " + std::to_string(e.range.begin) + "-" + std::to_string(e.range.end) + " " + e.message + "\n";
  return s;
}

TEST(EngineTest, SameTextTwiceGivesIdenticalResults) {
  std::string src = kAllRules + "\ndef broken(:\n    pass\n" + kFit;
  std::string first = serialize(check_source(src, {}));
  std::string second = serialize(check_source(src, {}));
  EXPECT_EQ(first, second);
  // A copy of the text at another address gives the same result too.
  std::string copy = src;
  EXPECT_EQ(serialize(check_source(copy, {})), first);
}

TEST(EngineTest, KnownRules) {
  EXPECT_TRUE(is_known_rule("TG001"));
  EXPECT_TRUE(is_known_rule("TG002"));
  EXPECT_TRUE(is_known_rule("TG003"));
  EXPECT_FALSE(is_known_rule("tg001"));
  EXPECT_FALSE(is_known_rule("TG999"));
  EXPECT_FALSE(is_known_rule(""));
}


// --- the analysis budget ------------------------------------------------------------------

TEST(EngineBudget, AFileOverTheNodeLimitIsTooComplexAndReportsNothing) {
  CheckOptions options;
  options.max_nodes = 50;
  CheckResult r = check_source(kAllRules, options);
  EXPECT_EQ(r.status, FileStatus::TooComplex);
  EXPECT_NE(r.status_reason.find("syntax nodes, over the limit of 50"), std::string::npos) << r.status_reason;
  EXPECT_TRUE(r.findings.empty());
  EXPECT_TRUE(r.unused_suppressions.empty());
  options.max_nodes = CheckOptions::kDefaultMaxNodes;
  EXPECT_EQ(check_source(kAllRules, options).status, FileStatus::Analyzed);
}

// An Interrupt that runs out of time at its n-th poll: deterministic, unlike a clock.
analysis::Interrupt out_of_time_at_poll(int n, std::shared_ptr<int> polls) {
  return analysis::Interrupt([n, polls] { return ++*polls >= n; }, "3 polls", {});
}

TEST(EngineBudget, RunningOutOfTimeHalfWayGivesTooComplexAndNoPartialFindings) {
  auto polls = std::make_shared<int>(0);
  analysis::Interrupt interrupt = out_of_time_at_poll(3, polls);
  CheckResult r = check_source_interruptible(kAllRules, {}, &interrupt);
  EXPECT_EQ(*polls, 3);
  EXPECT_EQ(r.status, FileStatus::TooComplex);
  EXPECT_EQ(r.status_reason, "too complex to analyze: the analysis ran past its time budget of 3 polls");
  EXPECT_TRUE(r.findings.empty());
  EXPECT_TRUE(r.silences.empty());
}

TEST(EngineBudget, ABudgetThatIsNotReachedChangesNothing) {
  auto polls = std::make_shared<int>(0);
  analysis::Interrupt interrupt = out_of_time_at_poll(1'000'000, polls);
  CheckResult r = check_source_interruptible(kAllRules, {}, &interrupt);
  EXPECT_EQ(r.status, FileStatus::Analyzed);
  EXPECT_EQ(describe(r), describe(check_source(kAllRules, {})));
  // Polled per unit (module, two functions, top-level statements, rules), not per node.
  EXPECT_GT(*polls, 5);
  EXPECT_LT(*polls, 40);
}

// The parse polls the budget too (tree-sitter's progress callback): a text whose parse is
// long is refused while parsing. Before, the deeply nested text parsed whole, was refused by
// the depth guard, and the budget was never polled.
TEST(EngineBudget, TheParseIsInsideTheBudget) {
  const std::string nested = "x = " + std::string(50'000, '[') + std::string(50'000, ']') + "\n";
  auto polls = std::make_shared<int>(0);
  analysis::Interrupt interrupt = out_of_time_at_poll(1, polls);
  CheckResult r = check_source_interruptible(nested, {}, &interrupt);
  EXPECT_EQ(*polls, 1);
  EXPECT_EQ(r.status, FileStatus::TooComplex);
  EXPECT_EQ(r.status_reason, "too complex to analyze: the analysis ran past its time budget of 3 polls");
  EXPECT_TRUE(r.syntax_errors.empty());
  // A cancellation during the parse reaches the caller.
  analysis::Interrupt cancelled({}, {}, [] { return true; });
  EXPECT_THROW(check_source_interruptible(nested, {}, &cancelled), analysis::AnalysisInterrupted);
}

TEST(EngineBudget, CancellationIsPassedToTheCallerNotTurnedIntoAResult) {
  analysis::Interrupt cancelled({}, {}, [] { return true; });
  try {
    check_source_interruptible(kAllRules, {}, &cancelled);
    ADD_FAILURE() << "a cancelled analysis returned a result";
  } catch (const analysis::AnalysisInterrupted& e) {
    EXPECT_EQ(e.reason, analysis::InterruptReason::Cancelled);
  }
}

}  // namespace
}  // namespace preflight::rules

namespace preflight::rules {
namespace {

// A LightningModule method whose loop backwards without zero_grad and accumulates unscaled:
// TG003 and TG014 see their pattern and stay silent for the Trainer.
const std::string kLightningLoop =
    "import lightning.pytorch as pl\n"
    "class Net(pl.LightningModule):\n"
    "    def training_step(self, batch, batch_idx):\n"
    "        opt = self.optimizers()\n"
    "        for i, chunk in enumerate(batch):\n"
    "            loss = self.net(chunk).mean()\n"
    "            loss.backward()\n"
    "            if (i + 1) % 4 == 0:\n"
    "                opt.step()\n";

TEST(EngineSilences, RulesThatStayQuietForAFrameworkSayWhy) {
  CheckResult r = check_source(kLightningLoop, {});
  EXPECT_TRUE(r.findings.empty());
  ASSERT_EQ(r.silences.size(), 2u);
  // Sorted by position: TG003 anchors on the call, TG014 on its receiver (same start).
  EXPECT_EQ(r.silences[0].code, "TG003");
  EXPECT_EQ(r.silences[1].code, "TG014");
  size_t call = kLightningLoop.find("loss.backward()");
  EXPECT_EQ(r.silences[0].range.begin, call);
  EXPECT_NE(r.silences[0].reason.find("Lightning Trainer"), std::string::npos);
  ASSERT_FALSE(r.silences[0].evidence.empty());
  EXPECT_EQ(r.silences[0].evidence[0].range.begin, kLightningLoop.find("(pl.LightningModule)"));
}

TEST(EngineSilences, OnlyRulesThatRanReportSilences) {
  CheckOptions options;
  options.ignore = {"TG003"};
  CheckResult r = check_source(kLightningLoop, options);
  ASSERT_EQ(r.silences.size(), 1u);
  EXPECT_EQ(r.silences[0].code, "TG014");
}

TEST(EngineSilences, SuppressionCommentsDoNotHideSilences) {
  std::string text = kLightningLoop;
  text.replace(text.find("loss.backward()\n"), 16, "loss.backward()  # noqa\n");
  EXPECT_EQ(check_source(text, {}).silences.size(), 2u);
}

}  // namespace
}  // namespace preflight::rules
