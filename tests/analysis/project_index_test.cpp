// The project index (analysis/project_index.h): how each call of a file is summarised, and how
// the other files' calls of a routine name decide "every call under no_grad" / "no call".
#include "analysis/project_index.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace preflight::analysis {
namespace {

const ProjectCall* call_named(const FileCalls& f, const std::string& name) {
  for (const ProjectCall& c : f.calls)
    if (c.name == name) return &c;
  return nullptr;
}

bool escapes(const FileCalls& f, const std::string& name) {
  for (const auto& [n, line] : f.escapes)
    if (n == name) return true;
  return false;
}

TEST(ProjectSummary, ReadsWhereEachCallRuns) {
  FileCalls f = summarize_calls(
      "import torch\n"
      "with torch.no_grad():\n"
      "    a()\n"
      "    with torch.enable_grad():\n"
      "        b()\n"
      "@torch.inference_mode()\n"
      "def run():\n"
      "    c()\n"
      "def main():\n"
      "    d()\n"
      "    g = lambda: e()\n"
      "    with torch.no_grad():\n"
      "        def inner():\n"
      "            f()\n"
      "h()\n",
      "m.py");
  ASSERT_TRUE(f.parsed);
  EXPECT_EQ(call_named(f, "a")->site, CallSite::NoGrad);
  EXPECT_EQ(call_named(f, "b")->site, CallSite::Module);  // enable_grad inside no_grad
  EXPECT_EQ(call_named(f, "c")->site, CallSite::NoGrad);  // a decorated routine
  EXPECT_EQ(call_named(f, "d")->site, CallSite::Routine);
  EXPECT_EQ(call_named(f, "d")->enclosing, "main");
  EXPECT_EQ(call_named(f, "e")->site, CallSite::Unknown);  // a lambda runs where it is called
  // A def inside a no_grad block runs where it is called: its own callers decide.
  EXPECT_EQ(call_named(f, "f")->site, CallSite::Routine);
  EXPECT_EQ(call_named(f, "f")->enclosing, "inner");
  EXPECT_EQ(call_named(f, "h")->site, CallSite::Module);
  EXPECT_EQ(call_named(f, "h")->line, 15u);
}

TEST(ProjectSummary, ADecoratorThatRegistersARoutineLetsItLeave) {
  FileCalls f = summarize_calls(
      "@registry.register('x')\n"
      "def build():\n"
      "    make()\n"
      "@staticmethod\n"
      "def plain():\n"
      "    keep()\n",
      "m.py");
  EXPECT_TRUE(escapes(f, "build"));
  EXPECT_EQ(call_named(f, "make")->site, CallSite::Unknown);
  EXPECT_FALSE(escapes(f, "plain"));
  EXPECT_EQ(call_named(f, "keep")->site, CallSite::Routine);
}

TEST(ProjectSummary, NamesPassedAsValuesAndGetattrWordsLeave) {
  FileCalls f = summarize_calls(
      "run(self.infer)\n"
      "fn = score\n"
      "getattr(model, 'predict')(x)\n"
      "log('eval_loss')\n"
      "metrics = {'eval_loss': 1}\n",
      "m.py");
  EXPECT_TRUE(escapes(f, "infer"));
  EXPECT_TRUE(escapes(f, "score"));
  EXPECT_TRUE(escapes(f, "predict"));
  EXPECT_FALSE(escapes(f, "eval_loss"));  // a metric's name is no routine leaving
}

TEST(ProjectSummary, CallsBoundToTheFilesOwnDefinitionsAreLocal) {
  FileCalls f = summarize_calls(
      "def validate(m):\n"
      "    pass\n"
      "class T:\n"
      "    def step(self):\n"
      "        self.check()\n"
      "        self.other()\n"
      "    def check(self):\n"
      "        pass\n"
      "validate(1)\n"
      "obj.validate(1)\n",
      "m.py");
  std::vector<bool> local;
  for (const ProjectCall& c : f.calls) local.push_back(c.local);
  ASSERT_EQ(f.calls.size(), 4u);
  EXPECT_TRUE(f.calls[0].local);   // self.check: a method of this file
  EXPECT_FALSE(f.calls[1].local);  // self.other: not defined here
  EXPECT_TRUE(f.calls[2].local);   // validate(1): the top-level def
  EXPECT_FALSE(f.calls[3].local);  // obj.validate: some object's method
}

TEST(ProjectSummary, DefinitionsInsideModuleLevelBlocksBindModuleNames) {
  FileCalls f = summarize_calls(
      "try:\n"
      "    def evaluate(m):\n"
      "        pass\n"
      "except ImportError:\n"
      "    pass\n"
      "def outer():\n"
      "    def helper():\n"
      "        pass\n"
      "evaluate(1)\n"
      "helper()\n",
      "m.py");
  ASSERT_EQ(f.calls.size(), 2u);
  EXPECT_TRUE(f.calls[0].local);   // evaluate(1): defined at module scope, inside `try`
  EXPECT_FALSE(f.calls[1].local);  // helper(): a def nested in a routine binds no module name
}

TEST(ProjectSummary, SeedingCalls) {
  FileCalls f = summarize_calls(
      "torch.manual_seed(0)\n"
      "torch.cuda.manual_seed(0)\n"
      "np.random.seed(0)\n"
      "random.seed(0)\n"
      "set_global_seeds(0)\n",
      "m.py");
  ASSERT_EQ(f.seeds.size(), 4u);
  EXPECT_EQ(f.seeds[0].first, kSeedsTorch);
  EXPECT_EQ(f.seeds[1].first, kSeedsNumpy);
  EXPECT_EQ(f.seeds[2].first, kSeedsRandom);
  EXPECT_EQ(f.seeds[3].first, kSeedsTorch | kSeedsNumpy | kSeedsRandom);
  EXPECT_EQ(f.seeds[3].second, 5u);
}

TEST(ProjectSummary, TextWithANulByteIsNotSummarised) {
  EXPECT_FALSE(summarize_calls(std::string("x = 1\0\n", 7), "m.py").parsed);
}

ProjectIndex index_of(std::vector<std::pair<std::string, std::string>> files) {
  std::vector<FileCalls> summaries;
  for (auto& [path, text] : files) summaries.push_back(summarize_calls(text, path));
  return ProjectIndex(std::move(summaries));
}

TEST(ProjectIndex, EveryCallUnderNoGradThroughTheCallersChain) {
  ProjectIndex index = index_of({
      {"model.py", "def evaluate(m):\n    pass\n"},
      {"loop.py", "def run_eval(m):\n    evaluate(m)\n"},
      {"main.py", "import torch\nwith torch.no_grad():\n    run_eval(m)\n    x.evaluate(m)\n"},
  });
  ProjectCallers c = index.callers("evaluate", "model.py");
  EXPECT_EQ(c.kind, ProjectCallers::Kind::NoGrad);
  EXPECT_EQ(c.no_grad_calls.size(), 2u);
  EXPECT_EQ(index.callers("run_eval", "model.py").kind, ProjectCallers::Kind::NoGrad);
}

TEST(ProjectIndex, OneCallWithAutogradOnDecides) {
  ProjectIndex index = index_of({
      {"model.py", "def evaluate(m):\n    pass\n"},
      {"main.py", "import torch\nwith torch.no_grad():\n    evaluate(m)\nobj.evaluate(m)\n"},
  });
  ProjectCallers c = index.callers("evaluate", "model.py");
  EXPECT_EQ(c.kind, ProjectCallers::Kind::Other);
  EXPECT_NE(c.why.find("main.py:4"), std::string::npos) << c.why;
}

TEST(ProjectIndex, NoCallAnywhereButNotWhenTheNameLeavesOrAFileIsUnread) {
  ProjectIndex index = index_of({{"model.py", "def predict(m):\n    pass\n"}, {"main.py", "x = 1\n"}});
  EXPECT_EQ(index.callers("predict", "model.py").kind, ProjectCallers::Kind::NoCall);
  ProjectIndex leaves = index_of({{"model.py", "def predict(m):\n    pass\n"}, {"main.py", "hooks.append(m.predict)\n"}});
  EXPECT_EQ(leaves.callers("predict", "model.py").kind, ProjectCallers::Kind::Other);
  std::vector<FileCalls> files{summarize_calls("def predict(m):\n    pass\n", "model.py"),
                               summarize_calls(std::string("\0", 1), "bin.py")};
  EXPECT_EQ(ProjectIndex(std::move(files)).callers("predict", "model.py").kind, ProjectCallers::Kind::Other);
}

TEST(ProjectIndex, ACallOfAnotherFilesOwnRoutineOfTheSameNameDoesNotCount) {
  ProjectIndex index = index_of({
      {"evaluate.py", "def predict_whole(net):\n    pass\n"},
      {"test.py", "import torch\ndef predict_whole(net):\n    pass\nwith torch.no_grad():\n    predict_whole(net)\n"},
  });
  EXPECT_EQ(index.callers("predict_whole", "evaluate.py").kind, ProjectCallers::Kind::NoCall);
}

TEST(ProjectIndex, TheCheckedFilesOwnEntryIsNeverRead) {
  ProjectIndex index = index_of({
      {"a.py", "def evaluate(m):\n    pass\nevaluate(m)\n"},
      {"b.py", "import torch\nwith torch.no_grad():\n    evaluate(m)\n"},
  });
  EXPECT_EQ(index.callers("evaluate", "a.py").kind, ProjectCallers::Kind::NoGrad);
  EXPECT_TRUE(index.has_other_files("a.py"));
  EXPECT_FALSE(index_of({{"a.py", "x = 1\n"}}).has_other_files("a.py"));
}

TEST(ProjectIndex, ARoutineCalledNowhereElseOrCyclicDoesNotProveNoGrad) {
  ProjectIndex index = index_of({
      {"model.py", "def infer(m):\n    pass\n"},
      {"helpers.py", "def unused():\n    infer(m)\ndef ping():\n    pong()\n    infer(m)\ndef pong():\n    ping()\n"},
  });
  EXPECT_EQ(index.callers("infer", "model.py").kind, ProjectCallers::Kind::Other);
}

TEST(ProjectIndex, SeedsElsewhere) {
  ProjectIndex index = index_of({{"agent.py", "x = 1\n"}, {"run.py", "import torch\nx = 1\ntorch.manual_seed(0)\n"}});
  EXPECT_EQ(index.seeded_elsewhere(kSeedsTorch, "agent.py"), "run.py:3");
  EXPECT_EQ(index.seeded_elsewhere(kSeedsNumpy, "agent.py"), "");
  EXPECT_EQ(index.seeded_elsewhere(kSeedsTorch, "run.py"), "");
}

}  // namespace
}  // namespace preflight::analysis
