#include "analysis/module_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>

#include "tests/analysis/test_support.h"

namespace preflight::analysis {
namespace {

using testing::Parsed;

// Callee of the first call whose text is `call_text`.
std::optional<std::string> callee_qualified(const Parsed& p, std::string_view call_text) {
  TSNode call = p.find(call_text);
  if (ts_node_is_null(call)) return std::nullopt;
  return p.model.qualified_name(field(call, kinds().f_function));
}

const char* kind_name(ValueKind k) {
  switch (k) {
    case ValueKind::Unknown: return "Unknown";
    case ValueKind::Model: return "Model";
    case ValueKind::Criterion: return "Criterion";
    case ValueKind::Optimizer: return "Optimizer";
    case ValueKind::Scheduler: return "Scheduler";
    case ValueKind::Literal: return "Literal";
    case ValueKind::Other: return "Other";
  }
  return "?";
}

#define EXPECT_KIND(actual, expected) \
  EXPECT_STREQ(kind_name(actual), kind_name(expected))

// --- imports and qualified names -------------------------------------------------------

TEST(ModuleModelTest, ImportAsAliasQualifiesCallee) {
  Parsed p("import torch.nn as nn\nlayer = nn.Linear(3, 4)\n");
  EXPECT_EQ(callee_qualified(p, "nn.Linear(3, 4)"), "torch.nn.Linear");
  ASSERT_NE(p.model.import_of("nn"), nullptr);
  EXPECT_EQ(p.model.import_of("nn")->qualified, "torch.nn");
  EXPECT_TRUE(p.model.import_of("nn")->is_module);
  EXPECT_EQ(p.model.import_of("torch"), nullptr);
  EXPECT_TRUE(p.model.has_torch_import());
  EXPECT_EQ(p.model.torch_alias(), "");  // `import torch.nn as nn` binds only `nn`
}

TEST(ModuleModelTest, FromImportAsAliasQualifiesCallee) {
  Parsed p("from torch.nn import functional as F\nl = F.cross_entropy(a, b)\n");
  EXPECT_EQ(callee_qualified(p, "F.cross_entropy(a, b)"), "torch.nn.functional.cross_entropy");
  ASSERT_NE(p.model.import_of("F"), nullptr);
  EXPECT_EQ(p.model.import_of("F")->qualified, "torch.nn.functional");
  EXPECT_FALSE(p.model.import_of("F")->is_module);
  EXPECT_EQ(p.model.import_of("functional"), nullptr);
}

TEST(ModuleModelTest, FromImportOfANameQualifiesIt) {
  Parsed p("from torch.optim import AdamW, SGD\nopt = AdamW(ps)\n");
  EXPECT_EQ(callee_qualified(p, "AdamW(ps)"), "torch.optim.AdamW");
  ASSERT_NE(p.model.import_of("SGD"), nullptr);
  EXPECT_EQ(p.model.import_of("SGD")->qualified, "torch.optim.SGD");
}

TEST(ModuleModelTest, ImportTorchSetsTorchAlias) {
  Parsed p("import torch\nx = torch.zeros(3)\n");
  EXPECT_EQ(p.model.torch_alias(), "torch");
  EXPECT_TRUE(p.model.has_torch_import());
  EXPECT_TRUE(p.model.touches_torch());
  EXPECT_EQ(callee_qualified(p, "torch.zeros(3)"), "torch.zeros");
}

TEST(ModuleModelTest, ImportTorchAsAliasSetsAlias) {
  Parsed p("import torch as th\nx = th.zeros(3)\n");
  EXPECT_EQ(p.model.torch_alias(), "th");
  EXPECT_EQ(callee_qualified(p, "th.zeros(3)"), "torch.zeros");
}

TEST(ModuleModelTest, ImportOfSubmoduleBindsTorch) {
  Parsed p("import torch.nn\nlayer = torch.nn.Linear(1, 1)\n");
  EXPECT_EQ(p.model.torch_alias(), "torch");
  EXPECT_EQ(callee_qualified(p, "torch.nn.Linear(1, 1)"), "torch.nn.Linear");
}

TEST(ModuleModelTest, FromTorchImportHasTorchImportButNoAlias) {
  Parsed p("from torch.utils.data import DataLoader\nloader = DataLoader(ds)\n");
  EXPECT_TRUE(p.model.has_torch_import());
  EXPECT_TRUE(p.model.torch_alias().empty());
  EXPECT_EQ(callee_qualified(p, "DataLoader(ds)"), "torch.utils.data.DataLoader");
}

TEST(ModuleModelTest, NoTorchImport) {
  Parsed p("import numpy as np\nx = np.zeros(3)\n");
  EXPECT_FALSE(p.model.has_torch_import());
  EXPECT_FALSE(p.model.touches_torch());
  EXPECT_TRUE(p.model.torch_alias().empty());
  EXPECT_EQ(callee_qualified(p, "np.zeros(3)"), "numpy.zeros");
}

TEST(ModuleModelTest, BackwardCallMakesFileTouchTorch) {
  Parsed p("def f(loss):\n    loss.backward()\n");
  EXPECT_FALSE(p.model.has_torch_import());
  EXPECT_TRUE(p.model.touches_torch());
  EXPECT_TRUE(p.model.functions()[p.function_index("f")].calls_backward);
}

TEST(ModuleModelTest, QualifiedNameOfUnimportedAndNonDottedExpressions) {
  Parsed p("import torch\nfoo.bar(1)\nmodel(x).y\n");
  EXPECT_EQ(callee_qualified(p, "foo.bar(1)"), "foo.bar");
  EXPECT_EQ(p.model.qualified_name(p.find("model(x).y")), std::nullopt);
  EXPECT_EQ(p.model.qualified_name(p.find("model(x)")), std::nullopt);
}

TEST(ModuleModelTest, ImportInsertionOffsetFollowsLastTopLevelImport) {
  std::string src = "\"\"\"doc\"\"\"\nimport os\nfrom torch import nn\n\ndef f():\n    import sys\n";
  Parsed p(src);
  EXPECT_EQ(p.model.import_insertion_offset(), src.find("\n\ndef") + 1);
}

// --- scopes, functions, parameters -----------------------------------------------------

const char* kProgram =
    "import torch.nn as nn\n"
    "class Net(nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.fc = nn.Linear(3, 4)\n"
    "    def forward(self, x):\n"
    "        return self.fc(x)\n"
    "def fit(model, data=None, lr: float = 0.1, *args, epochs: int, **kw):\n"
    "    double = lambda t: t * 2\n"
    "    squares = [v * v for v in data]\n"
    "    total = sum(v for v in data)\n"
    "    table = {k: v for k, v in data}\n"
    "    return double\n";

TEST(ModuleModelTest, CountsScopesOfEachKind) {
  Parsed p(kProgram);
  std::map<ScopeKind, int> count;
  for (const Scope& s : p.model.scopes()) ++count[s.kind];
  EXPECT_EQ(count[ScopeKind::Module], 1);
  EXPECT_EQ(count[ScopeKind::Class], 1);
  EXPECT_EQ(count[ScopeKind::Function], 3);
  EXPECT_EQ(count[ScopeKind::Lambda], 1);
  EXPECT_EQ(count[ScopeKind::Comprehension], 3);
  EXPECT_EQ(p.model.scopes().size(), 9u);
  EXPECT_EQ(p.model.scopes()[0].kind, ScopeKind::Module);
  EXPECT_EQ(p.model.scopes()[0].parent, -1);
}

TEST(ModuleModelTest, ScopesNestAndAreOpenedByTheirNodes) {
  Parsed p(kProgram);
  int fit_scope = p.function_scope("fit");
  TSNode lambda = p.find("lambda t: t * 2");
  int lambda_scope = p.model.scope_opened_by(lambda);
  ASSERT_GE(lambda_scope, 0);
  EXPECT_EQ(p.model.scopes()[lambda_scope].kind, ScopeKind::Lambda);
  EXPECT_EQ(p.model.scopes()[lambda_scope].parent, fit_scope);
  EXPECT_EQ(p.model.enclosing_function(lambda_scope), p.function_index("fit"));

  TSNode comp = p.find("[v * v for v in data]");
  int comp_scope = p.model.scope_opened_by(comp);
  ASSERT_GE(comp_scope, 0);
  EXPECT_EQ(p.model.scopes()[comp_scope].kind, ScopeKind::Comprehension);
  EXPECT_EQ(p.model.scopes()[comp_scope].parent, fit_scope);

  int fwd = p.function_scope("forward");
  int cls = p.model.class_named("Net");
  ASSERT_GE(cls, 0);
  EXPECT_EQ(p.model.enclosing_class(fwd), cls);
  EXPECT_EQ(p.model.enclosing_class(fit_scope), -1);
  EXPECT_EQ(p.model.functions()[p.function_index("forward")].class_index, cls);
  EXPECT_EQ(p.model.functions()[p.function_index("fit")].class_index, -1);
  EXPECT_EQ(p.model.scope_opened_by(p.find("nn.Linear(3, 4)")), -1);
}

TEST(ModuleModelTest, FunctionLookupAndReturns) {
  Parsed p(kProgram);
  int fit = p.function_index("fit");
  EXPECT_EQ(p.model.function_of(p.model.functions()[fit].node), fit);
  EXPECT_EQ(p.model.functions_named("nope"), nullptr);
  EXPECT_EQ(p.model.functions()[fit].returns.size(), 1u);
  EXPECT_EQ(p.model.functions()[p.function_index("__init__")].returns.size(), 0u);
  EXPECT_FALSE(p.model.functions()[fit].calls_backward);
}

TEST(ModuleModelTest, ParametersWithDefaultsAndAnnotations) {
  Parsed p(kProgram);
  const FunctionInfo& fit = p.model.functions()[p.function_index("fit")];
  std::vector<std::string> names;
  for (const Parameter& prm : fit.params) names.push_back(prm.name);
  EXPECT_EQ(names, (std::vector<std::string>{"model", "data", "lr", "epochs"}));
  ASSERT_EQ(fit.params.size(), 4u);
  EXPECT_TRUE(ts_node_is_null(fit.params[0].annotation));
  EXPECT_TRUE(ts_node_is_null(fit.params[1].annotation));
  EXPECT_EQ(text_of(fit.params[2].annotation, p.src), "float");
  EXPECT_EQ(text_of(fit.params[3].annotation, p.src), "int");
  EXPECT_EQ(text_of(fit.params[2].node, p.src), "lr");

  int scope = fit.scope;
  ASSERT_NE(p.model.parameter("lr", scope), nullptr);
  EXPECT_EQ(p.model.parameter("lr", scope)->name, "lr");
  EXPECT_EQ(p.model.parameter("args", scope), nullptr);
  EXPECT_EQ(p.model.parameter("kw", scope), nullptr);
  EXPECT_EQ(p.model.parameter("squares", scope), nullptr);

  const FunctionInfo& fwd = p.model.functions()[p.function_index("forward")];
  ASSERT_EQ(fwd.params.size(), 2u);
  EXPECT_EQ(fwd.params[0].name, "self");
  EXPECT_EQ(fwd.params[1].name, "x");
}

TEST(ModuleModelTest, PositionalOnlyAndKeywordOnlySeparatorsAreNotParameters) {
  Parsed p("def g(a, /, b, *, c=1):\n    pass\n");
  const FunctionInfo& g = p.model.functions()[p.function_index("g")];
  std::vector<std::string> names;
  for (const Parameter& prm : g.params) names.push_back(prm.name);
  EXPECT_EQ(names, (std::vector<std::string>{"a", "b", "c"}));
}

TEST(ModuleModelTest, DecoratedFunctionRecordsOuterNode) {
  Parsed p("import torch\n@torch.no_grad()\ndef ev(m):\n    pass\ndef plain():\n    pass\n");
  const FunctionInfo& ev = p.model.functions()[p.function_index("ev")];
  EXPECT_EQ(ts_node_symbol(ev.outer), kinds().decorated_definition);
  const FunctionInfo& plain = p.model.functions()[p.function_index("plain")];
  EXPECT_TRUE(ts_node_eq(plain.outer, plain.node));
}

TEST(ModuleModelTest, TupleTargetsRecordPositionAndArity) {
  Parsed p("a, (b, c) = f()\nd = e = 3\n");
  const auto& b = p.model.scopes()[0].bindings;
  ASSERT_TRUE(b.count("a"));
  EXPECT_EQ(b.at("a")[0].position, 0);
  EXPECT_EQ(b.at("a")[0].arity, 2);
  ASSERT_TRUE(b.count("d"));
  ASSERT_TRUE(b.count("e"));
  EXPECT_EQ(text_of(b.at("d")[0].value, p.src), "3");
  EXPECT_EQ(text_of(b.at("e")[0].value, p.src), "3");
  EXPECT_EQ(b.at("d")[0].position, -1);
}

// --- classification: models --------------------------------------------------------------

TEST(ModuleModelTest, NameBoundToTorchLayerIsModel) {
  Parsed p("import torch.nn as nn\nlayer = nn.Linear(3, 4)\n");
  EXPECT_KIND(p.model.kind_of("layer", 0), ValueKind::Model);
  EXPECT_TRUE(p.model.is_model("layer", 0));
}

TEST(ModuleModelTest, NameBoundToFromPretrainedIsModel) {
  Parsed p("from transformers import AutoModel\nlm = AutoModel.from_pretrained('bert')\n");
  EXPECT_KIND(p.model.kind_of("lm", 0), ValueKind::Model);
  EXPECT_TRUE(p.model.is_model("lm", 0));
}

TEST(ModuleModelTest, InstanceOfLocalModuleSubclassIsModel) {
  Parsed p(
      "import torch.nn as nn\n"
      "class Net(nn.Module):\n"
      "    pass\n"
      "class Deeper(Net):\n"
      "    pass\n"
      "class Plain:\n"
      "    pass\n"
      "thing = Net()\n"
      "other = Deeper().to('cuda')\n"
      "box = Plain()\n");
  EXPECT_TRUE(p.model.is_module_class("Net"));
  EXPECT_TRUE(p.model.is_module_class("Deeper"));  // through a local base
  EXPECT_FALSE(p.model.is_module_class("Plain"));
  EXPECT_TRUE(p.model.is_model("thing", 0));
  EXPECT_TRUE(p.model.is_model("other", 0));
  EXPECT_FALSE(p.model.is_model("box", 0));
  int net = p.model.class_named("Net");
  ASSERT_GE(net, 0);
  EXPECT_EQ(p.model.classes()[net].bases, (std::vector<std::string>{"torch.nn.Module"}));
  EXPECT_TRUE(p.model.classes()[net].is_module);
  EXPECT_FALSE(p.model.classes()[net].is_lightning);
}

TEST(ModuleModelTest, LightningSubclassIsModuleAndLightning) {
  Parsed p(
      "import pytorch_lightning as pl\n"
      "class Lit(pl.LightningModule):\n"
      "    pass\n"
      "class Sub(Lit):\n"
      "    pass\n");
  int lit = p.model.class_named("Lit"), sub = p.model.class_named("Sub");
  ASSERT_GE(lit, 0);
  ASSERT_GE(sub, 0);
  EXPECT_TRUE(p.model.classes()[lit].is_lightning);
  EXPECT_TRUE(p.model.classes()[sub].is_lightning);
  EXPECT_TRUE(p.model.classes()[sub].is_module);
  EXPECT_TRUE(p.model.touches_torch());
}

TEST(ModuleModelTest, AcceleratorPrepareOfAModelIsModel) {
  Parsed p(
      "import torch.nn as nn\n"
      "from accelerate import Accelerator\n"
      "accelerator = Accelerator()\n"
      "base = nn.Linear(2, 2)\n"
      "wrapped = accelerator.prepare(base)\n");
  EXPECT_KIND(p.model.kind_of("wrapped", 0), ValueKind::Model);
  EXPECT_TRUE(p.model.is_model("wrapped", 0));
}

TEST(ModuleModelTest, AcceleratorPrepareOfAnUnseenObjectIsTakenToBeTheModel) {
  Parsed p("def setup(accelerator, thing):\n    wrapped = accelerator.prepare(thing)\n");
  EXPECT_KIND(p.model.kind_of("wrapped", p.function_scope("setup")), ValueKind::Model);
}

TEST(ModuleModelTest, TokenizerAndProcessorAreNotModels) {
  Parsed p(
      "from transformers import AutoTokenizer, AutoProcessor\n"
      "tok = AutoTokenizer.from_pretrained('bert')\n"
      "proc = AutoProcessor.from_pretrained('clip')\n");
  EXPECT_FALSE(p.model.is_model("tok", 0));
  EXPECT_FALSE(p.model.is_model("proc", 0));
  EXPECT_NE(p.model.kind_of("tok", 0), ValueKind::Model);
  EXPECT_NE(p.model.kind_of("proc", 0), ValueKind::Model);
}

TEST(ModuleModelTest, ParameterAnnotatedTypeOfModuleIsNotAModel) {
  Parsed p(
      "import torch.nn as nn\n"
      "from typing import Type\n"
      "def build(factory: Type[nn.Module], maker: Callable[..., nn.Module]):\n"
      "    pass\n");
  int scope = p.function_scope("build");
  EXPECT_FALSE(p.model.is_model("factory", scope));
  EXPECT_FALSE(p.model.is_model("maker", scope));
}

TEST(ModuleModelTest, ParameterAnnotatedModuleIsModel) {
  Parsed p(
      "import torch.nn as nn\n"
      "class Net(nn.Module):\n"
      "    pass\n"
      "def run(m: nn.Module, k: int, o: torch.optim.Optimizer):\n"
      "    pass\n");
  int scope = p.function_scope("run");
  EXPECT_TRUE(p.model.is_model("m", scope));
  EXPECT_KIND(p.model.kind_of("m", scope), ValueKind::Model);
  EXPECT_FALSE(p.model.is_model("k", scope));
  EXPECT_KIND(p.model.kind_of("o", scope), ValueKind::Optimizer);
}

TEST(ModuleModelTest, AnnotatedModuleParameterMovedToADeviceStaysAModel) {
  // `m = m.to(device)` rebinds the parameter to itself: still the annotated module.
  Parsed p(
      "import torch.nn as nn\n"
      "def run(m: nn.Module, device):\n"
      "    m = m.to(device)\n"
      "    return m\n");
  int scope = p.function_scope("run");
  EXPECT_KIND(p.model.kind_of("m", scope), ValueKind::Model);
  EXPECT_TRUE(p.model.is_model("m", scope));
}

TEST(ModuleModelTest, ParameterAnnotatedWithLocalModuleClassIsModel) {
  Parsed p(
      "import torch.nn as nn\n"
      "class Net(nn.Module):\n"
      "    pass\n"
      "def run(m: Net):\n"
      "    pass\n");
  EXPECT_TRUE(p.model.is_model("m", p.function_scope("run")));
}

TEST(ModuleModelTest, TupleUnpackingOfPrepareGivesEachTargetItsArgumentsKind) {
  Parsed p(
      "import torch\n"
      "import torch.nn as nn\n"
      "model_a = nn.Linear(2, 2)\n"
      "model, opt = accelerator.prepare(model_a, torch.optim.AdamW(model_a.parameters()))\n");
  EXPECT_KIND(p.model.kind_of("opt", 0), ValueKind::Optimizer);
  EXPECT_KIND(p.model.kind_of("model", 0), ValueKind::Model);
  EXPECT_TRUE(p.model.is_optimizer("opt", 0));
  EXPECT_FALSE(p.model.is_model("opt", 0));
}

TEST(ModuleModelTest, NnParameterIsNotAModel) {
  // nn.Parameter wraps a tensor; it is not a module.
  Parsed p("import torch\nimport torch.nn as nn\nw = nn.Parameter(torch.zeros(3))\n");
  EXPECT_NE(p.model.kind_of("w", 0), ValueKind::Model);
  EXPECT_FALSE(p.model.is_model("w", 0));
}

TEST(ModuleModelTest, ChainedMethodsReturningTheReceiverKeepItsKind) {
  Parsed p("import torch.nn as nn\nlayer = nn.Linear(2, 2).cuda().eval()\n");
  EXPECT_KIND(p.model.kind_of("layer", 0), ValueKind::Model);
}

TEST(ModuleModelTest, LiteralBindingIsNotAModelEvenWithAModelName) {
  Parsed p("model = 'resnet50'\n");
  EXPECT_KIND(p.model.kind_of("model", 0), ValueKind::Literal);
  EXPECT_FALSE(p.model.is_model("model", 0));
}

TEST(ModuleModelTest, UnboundModelNameFallsBackToNaming) {
  Parsed p("def f(model, batch):\n    pass\n");
  int scope = p.function_scope("f");
  EXPECT_KIND(p.model.kind_of("model", scope), ValueKind::Unknown);
  EXPECT_TRUE(p.model.is_model("model", scope));
  EXPECT_FALSE(p.model.is_model("batch", scope));
}

// --- classification: optimizers, criteria, schedulers ---------------------------------

TEST(ModuleModelTest, SgdBindingIsOptimizer) {
  Parsed p("import torch\nstepper = torch.optim.SGD(params, lr=0.1)\n");
  EXPECT_KIND(p.model.kind_of("stepper", 0), ValueKind::Optimizer);
  EXPECT_TRUE(p.model.is_optimizer("stepper", 0));
  EXPECT_FALSE(p.model.is_model("stepper", 0));
}

TEST(ModuleModelTest, OptimizerClassNameAsVariableIsOptimizerByNaming) {
  Parsed p("def step(adam, sgd, thing):\n    adam.step()\n");
  int scope = p.function_scope("step");
  EXPECT_TRUE(p.model.is_optimizer("adam", scope));
  EXPECT_TRUE(p.model.is_optimizer("sgd", scope));
  EXPECT_FALSE(p.model.is_optimizer("thing", scope));
}

TEST(ModuleModelTest, SchedulerIsNotAnOptimizer) {
  Parsed p("import torch\nsched_opt = torch.optim.lr_scheduler.StepLR(o, 1)\n");
  EXPECT_KIND(p.model.kind_of("sched_opt", 0), ValueKind::Scheduler);
  EXPECT_FALSE(p.model.is_optimizer("sched_opt", 0));
}

TEST(ModuleModelTest, LossModuleBindingIsCriterion) {
  Parsed p("import torch.nn as nn\nce = nn.CrossEntropyLoss()\n");
  EXPECT_KIND(p.model.kind_of("ce", 0), ValueKind::Criterion);
  EXPECT_TRUE(p.model.is_criterion("ce", 0));
  EXPECT_FALSE(p.model.is_model("ce", 0));
}

TEST(ModuleModelTest, FunctionalLossBindingIsCriterion) {
  Parsed p("import torch.nn.functional as F\nloss_fn = F.mse_loss\nother = F.relu\n");
  EXPECT_KIND(p.model.kind_of("loss_fn", 0), ValueKind::Criterion);
  EXPECT_TRUE(p.model.is_criterion("loss_fn", 0));
  EXPECT_FALSE(p.model.is_criterion("other", 0));
}

TEST(ModuleModelTest, CriterionNameFallsBackToNaming) {
  Parsed p("def f(criterion, loader):\n    pass\n");
  int scope = p.function_scope("f");
  EXPECT_TRUE(p.model.is_criterion("criterion", scope));
  EXPECT_FALSE(p.model.is_criterion("loader", scope));
}

// --- classes and self bindings ---------------------------------------------------------

const char* kNetWithSelf =
    "import torch.nn as nn\n"
    "class Net(nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.encoder = nn.Linear(4, 4)\n"
    "        self.proj = nn.Linear(4, 2)\n"
    "        self.scale = 2.0\n"
    "        self.loss = nn.MSELoss()\n"
    "    def forward(self, x):\n"
    "        return self.proj(self.encoder(x))\n";

TEST(ModuleModelTest, SelfBindingsAreRecordedOnTheClass) {
  Parsed p(kNetWithSelf);
  int cls = p.model.class_named("Net");
  ASSERT_GE(cls, 0);
  const ClassInfo& c = p.model.classes()[cls];
  EXPECT_EQ(c.self_bindings.count("encoder"), 1u);
  EXPECT_EQ(c.self_bindings.count("proj"), 1u);
  EXPECT_EQ(c.self_bindings.count("scale"), 1u);
  EXPECT_EQ(c.self_bindings.count("missing"), 0u);
}

TEST(ModuleModelTest, SelfAttributeBoundInInitIsModelInAnotherMethod) {
  Parsed p(kNetWithSelf);
  int fwd = p.function_scope("forward");
  EXPECT_KIND(p.model.kind_of("self.encoder", fwd), ValueKind::Model);
  EXPECT_KIND(p.model.kind_of("self.proj", fwd), ValueKind::Model);
  EXPECT_TRUE(p.model.is_model("self.proj", fwd));
  EXPECT_KIND(p.model.kind_of("self.scale", fwd), ValueKind::Literal);
  EXPECT_FALSE(p.model.is_model("self.scale", fwd));
  EXPECT_TRUE(p.model.is_criterion("self.loss", fwd));
}

TEST(ModuleModelTest, SelfBindingsDoNotLeakOutOfTheClass) {
  std::string src = std::string(kNetWithSelf) + "def outside(x):\n    return x\n";
  Parsed p(src);
  EXPECT_KIND(p.model.kind_of("self.proj", p.function_scope("outside")), ValueKind::Unknown);
}

// --- test functions ----------------------------------------------------------------------

TEST(ModuleModelTest, PytestAndUnittestFunctionsAreTestFunctions) {
  Parsed p(
      "import unittest\n"
      "def test_x():\n"
      "    pass\n"
      "def helper():\n"
      "    pass\n"
      "class T(unittest.TestCase):\n"
      "    def check_it(self):\n"
      "        pass\n"
      "class Plain:\n"
      "    def method(self):\n"
      "        pass\n");
  EXPECT_TRUE(p.model.is_test_function(p.function_index("test_x")));
  EXPECT_TRUE(p.model.is_test_function(p.function_index("check_it")));
  EXPECT_FALSE(p.model.is_test_function(p.function_index("helper")));
  EXPECT_FALSE(p.model.is_test_function(p.function_index("method")));
}

TEST(ModuleModelTest, MethodOfASubclassOfALocalTestCaseIsATestFunction) {
  Parsed p(
      "import unittest\n"
      "class Base(unittest.TestCase):\n"
      "    pass\n"
      "class T(Base):\n"
      "    def check_it(self):\n"
      "        pass\n");
  EXPECT_TRUE(p.model.is_test_function(p.function_index("check_it")));
}


// --- the call table ------------------------------------------------------------------------

// Every call of `p` must be in the table and answer as the free functions do.
void expect_call_table_matches(const Parsed& p, const std::string& label) {
  const Kinds& k = kinds();
  size_t calls = 0;
  for_each_node(p.root(), [&](TSNode n, uint32_t) {
    if (!is(n, k.call)) return;
    ++calls;
    TSNode callee = field(n, k.f_function);
    ASSERT_TRUE(ts_node_eq(p.model.callee_of(n), callee)) << label << " at " << ts_node_start_byte(n);
    ASSERT_EQ(p.model.callee_leaf(n), callee_leaf(n, p.src)) << label << " at " << ts_node_start_byte(n);
    auto expected = p.model.qualified_name(callee);
    auto got = p.model.qualified_callee(n);
    ASSERT_EQ(got.has_value(), expected.has_value()) << label << " at " << ts_node_start_byte(n);
    if (got) { ASSERT_EQ(*got, *expected) << label << " at " << ts_node_start_byte(n); }
  });
  EXPECT_GT(calls, 0u) << label;
  // The calls of a subtree from the table are exactly those a walk of the subtree meets.
  for_each_node(p.root(), [&](TSNode n, uint32_t) {
    if (!is(n, k.function_definition) && !is(n, k.block) && !is(n, k.call)) return;
    std::vector<const void*> walked, table;
    for_each_node(n, [&](TSNode c, uint32_t) {
      if (is(c, k.call)) walked.push_back(c.id);
    });
    p.model.for_each_call_in(n, [&](TSNode c) { table.push_back(c.id); });
    ASSERT_EQ(table, walked) << label << ": calls inside the node at " << ts_node_start_byte(n);
  });
}

TEST(ModuleModelTest, CallTableAnswersForCallsInEveryPosition) {
  // A qualified name that is not the text as written (`F . relu`) can only come from the
  // table: these calls sit where a builder that walks fields one by one would miss them
  // (superclasses, annotations, decorators, defaults), and `f(x)(y)` shares its start.
  Parsed p(
      "@register(F . relu(x))\n"
      "class A(F . relu(x), metaclass=meta(F . relu)):\n"
      "    def m(self, a=F . relu(1)) -> F . relu(2):\n"
      "        return f(x)(y)\n"
      "def g[T: F . relu(3)](b: F . relu(4) = F . relu(5)) -> F . relu(6):\n"
      "    h = lambda: F . relu(7)\n"
      "    return [F . relu(i) for i in range(3)]\n"
      "import torch.nn.functional as F\n");
  expect_call_table_matches(p, "inline");
  EXPECT_EQ(p.model.qualified_callee(p.find("F . relu(6)")).value_or(""), "torch.nn.functional.relu");
  EXPECT_EQ(p.model.qualified_callee(p.find("F . relu(x)")).value_or(""), "torch.nn.functional.relu");
}

TEST(ModuleModelTest, CallTableAnswersOfANodeThatIsNotACall) {
  Parsed p("import torch\nx = torch.zeros(1)\n");
  TSNode attr = p.find("torch.zeros");
  EXPECT_EQ(p.model.callee_leaf(attr), "");
  EXPECT_FALSE(p.model.qualified_callee(attr));
  EXPECT_TRUE(is_null(p.model.callee_of(attr)));
  EXPECT_FALSE(p.model.qualified_callee(TSNode{}));
}

TEST(ModuleModelTest, CallTableMatchesOnEveryFixture) {
  size_t files = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(PF_TEST_FIXTURES)) {
    if (entry.path().extension() != ".py" || !entry.is_regular_file()) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    Parsed p(std::string{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()});
    bool has_call = false;
    for_each_node(p.root(), [&](TSNode n, uint32_t) { has_call = has_call || is(n, kinds().call); });
    if (has_call) expect_call_table_matches(p, entry.path().string());
    ++files;
  }
  EXPECT_GT(files, 50u);
}

}  // namespace
}  // namespace preflight::analysis
