// Unit tests of the facts rules share instead of keeping private copies: scoped binding
// lookup, reaching definitions, local callees with their parameter mapping, framework
// ownership, torch's DataLoader and the "targets CUDA" scan.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "analysis/frameworks.h"
#include "analysis/local_calls.h"
#include "analysis/reaching.h"
#include "analysis/torch_facts.h"
#include "analysis/walker.h"
#include "tests/analysis/test_support.h"

namespace preflight::analysis {
namespace {

using testing::Parsed;

std::string value_text(const Parsed& p, TSNode n) { return std::string(text_of(n, p.src)); }

// --- scoped binding lookup ---------------------------------------------------------------

TEST(BindingsOf, NearestScopeThatBindsTheName) {
  Parsed p(
      "crit = nn.MSELoss()\n"
      "def fit():\n"
      "    crit = nn.CrossEntropyLoss()\n"
      "    return crit\n"
      "def other():\n"
      "    return crit\n");
  const auto* inner = p.model.bindings_of("crit", p.function_scope("fit"));
  ASSERT_NE(inner, nullptr);
  ASSERT_EQ(inner->size(), 1u);
  EXPECT_EQ(value_text(p, inner->front().value), "nn.CrossEntropyLoss()");
  const auto* outer = p.model.bindings_of("crit", p.function_scope("other"));
  ASSERT_NE(outer, nullptr);
  EXPECT_EQ(value_text(p, outer->front().value), "nn.MSELoss()");
  EXPECT_EQ(p.model.bindings_of("missing", p.function_scope("fit")), nullptr);
}

TEST(BindingsOf, ClassBodiesDoNotEncloseTheirMethods) {
  Parsed p(
      "class Net:\n"
      "    act = nn.Sigmoid()\n"
      "    def forward(self, x):\n"
      "        return act(x)\n");
  EXPECT_EQ(p.model.bindings_of("act", p.function_scope("forward")), nullptr);
}

TEST(BindingsOf, InstanceStateIsBoundInAnyMethodOfTheClass) {
  Parsed p(
      "class Net:\n"
      "    def __init__(self):\n"
      "        self.buf = torch.zeros(4, device='cuda')\n"
      "    def step(self, x):\n"
      "        return self.buf\n");
  int found_in = -1;
  const auto* sites = p.model.bindings_of("self.buf", p.function_scope("step"), &found_in);
  ASSERT_NE(sites, nullptr);
  EXPECT_EQ(value_text(p, sites->front().value), "torch.zeros(4, device='cuda')");
  EXPECT_EQ(p.model.scopes()[found_in].kind, ScopeKind::Class);
}

// --- reaching definitions ----------------------------------------------------------------

TEST(ReachingValues, LaterUnconditionalAssignmentReplacesEarlierOnes) {
  Parsed p(
      "def f(x):\n"
      "    y = torch.sigmoid(x)\n"
      "    y = x * 2\n"
      "    return loss(y)\n");
  TSNode use = p.find("y", "loss(");
  std::vector<TSNode> values = reaching_values(p.model, "y", use, p.function_scope("f"));
  ASSERT_EQ(values.size(), 1u);
  EXPECT_EQ(value_text(p, values[0]), "x * 2");
}

TEST(ReachingValues, BranchAssignmentsAfterTheLastUnconditionalOneAllReach) {
  Parsed p(
      "def f(x, c):\n"
      "    y = x\n"
      "    if c:\n"
      "        y = torch.sigmoid(x)\n"
      "    z = loss(y)\n"
      "    y = 3\n");
  TSNode use = p.find("y", "loss(");
  std::vector<TSNode> values = reaching_values(p.model, "y", use, p.function_scope("f"));
  ASSERT_EQ(values.size(), 2u);
  EXPECT_EQ(value_text(p, values[0]), "x");
  EXPECT_EQ(value_text(p, values[1]), "torch.sigmoid(x)");
}

TEST(ReachingValues, TupleUnpackingIsNotFollowed) {
  Parsed p(
      "def f(x):\n"
      "    y, z = model(x)\n"
      "    return loss(y)\n");
  EXPECT_TRUE(reaching_values(p.model, "y", p.find("y", "loss("), p.function_scope("f")).empty());
}

// Found by the analysis fuzz target: a binding whose right side did not parse has no value
// node, and following it reached tree-sitter with a null node (a crash without sanitizers).
// Such a binding, like a bare declaration, assigns nothing: the values around it still reach.
TEST(ReachingValues, ABindingWithoutAValueIsPassedOver) {
  Parsed p(
      "def f(net, xb):\n"
      "    y = net(xb)\n"
      "    y =else: net(xb)\n"
      "    return loss(y)\n");
  const auto* sites = p.model.bindings_of("y", p.function_scope("f"));
  ASSERT_NE(sites, nullptr);
  ASSERT_TRUE(std::any_of(sites->begin(), sites->end(), [](const BindingSite& b) { return is_null(b.value); }));
  std::vector<TSNode> values = reaching_values(p.model, "y", p.find("y", "loss("), p.function_scope("f"));
  ASSERT_EQ(values.size(), 1u);
  EXPECT_EQ(value_text(p, values[0]), "net(xb)");
}

TEST(ReachingValues, ADeclarationDoesNotHideTheAssignmentAfterIt) {
  Parsed p(
      "def f(net, xb):\n"
      "    y: torch.Tensor\n"
      "    y = torch.sigmoid(net(xb))\n"
      "    return loss(y)\n");
  std::vector<TSNode> values = reaching_values(p.model, "y", p.find("y", "loss("), p.function_scope("f"));
  ASSERT_EQ(values.size(), 1u);
  EXPECT_EQ(value_text(p, values[0]), "torch.sigmoid(net(xb))");
}

TEST(LastAssignment, LastPlainAssignmentBeforeTheOffsetOutsideNestedDefinitions) {
  Parsed p(
      "def f(n):\n"
      "    k = n\n"
      "    k += 1\n"
      "    def g():\n"
      "        k = 0\n"
      "    k = n * 2\n"
      "    use(k)\n"
      "    k = 7\n");
  TSNode body = field(p.model.functions()[p.function_index("f")].node, kinds().f_body);
  TSNode def = last_assignment("k", body, ts_node_start_byte(p.find("use(k)")), p.src);
  EXPECT_EQ(value_text(p, def), "k = n * 2");
  TSNode first = last_assignment("k", body, ts_node_start_byte(p.find("k += 1")), p.src);
  EXPECT_EQ(value_text(p, first), "k = n");
  EXPECT_TRUE(is_null(last_assignment("k", body, ts_node_start_byte(p.find("k = n")), p.src)));
}

// --- local callees and their parameters --------------------------------------------------

TEST(LocalCalls, BareNamesAndSelfMethodsResolveOthersDoNot) {
  Parsed p(
      "def helper(m): pass\n"
      "class T:\n"
      "    def run(self, m):\n"
      "        helper(m)\n"
      "        self.run(m)\n"
      "        other.run(m)\n");
  EXPECT_EQ(local_callee(p.model, p.find("helper(m)", "self, m")), &p.model.functions()[p.function_index("helper")]);
  EXPECT_EQ(local_callee(p.model, p.find("self.run(m)")), &p.model.functions()[p.function_index("run")]);
  EXPECT_EQ(local_callee(p.model, p.find("other.run(m)")), nullptr);
  EXPECT_EQ(local_callee_name(p.find("other.run(m)"), p.src), "");
}

TEST(LocalCalls, ARedefinedNameHasSeveralCalleesAndNoUniqueOne) {
  Parsed p(
      "def step(x): pass\n"
      "def step(x, y): pass\n"
      "step(1)\n");
  TSNode call = p.find("step(1)");
  ASSERT_NE(local_callees(p.model, call), nullptr);
  EXPECT_EQ(local_callees(p.model, call)->size(), 2u);
  EXPECT_EQ(local_callee(p.model, call), nullptr);
}

TEST(LocalCalls, ParametersMapToTheArgumentsOfTheCall) {
  Parsed p(
      "class T:\n"
      "    def evaluate(self, model, loader, cfg=None):\n"
      "        model.eval()\n"
      "        net = model.module\n"
      "    def fit(self):\n"
      "        self.evaluate(self.net.module, loader=val_dl)\n"
      "        self.evaluate(*args)\n");
  const FunctionInfo& fn = p.model.functions()[p.function_index("evaluate")];
  TSNode call = p.find("self.evaluate(self.net.module, loader=val_dl)");
  EXPECT_EQ(value_text(p, argument_for(fn, call, 1, p.src)), "self.net.module");
  EXPECT_EQ(value_text(p, argument_for(fn, call, 2, p.src)), "val_dl");
  EXPECT_TRUE(is_null(argument_for(fn, call, 0, p.src)));  // self is the receiver
  EXPECT_TRUE(is_null(argument_for(fn, call, 3, p.src)));  // left to its default
  EXPECT_EQ(name_at_call_site(p.model, fn, call, "model.backbone"), "self.net.module.backbone");
  EXPECT_EQ(name_at_call_site(p.model, fn, call, "self.ema"), "self.ema");
  EXPECT_EQ(name_at_call_site(p.model, fn, call, "net"), std::nullopt);  // the helper's own local
  EXPECT_EQ(name_at_call_site(p.model, fn, call, "GLOBAL_MODEL"), "GLOBAL_MODEL");
  EXPECT_EQ(name_at_call_site(p.model, fn, p.find("self.evaluate(*args)"), "model"), std::nullopt);
}

// --- framework ownership -------------------------------------------------------------------

TEST(Frameworks, PackagesMapToTheirFramework) {
  EXPECT_EQ(framework_of_package("lightning.pytorch.Trainer"), Framework::Lightning);
  EXPECT_EQ(framework_of_package("pytorch_lightning"), Framework::Lightning);
  EXPECT_EQ(framework_of_package("lightning.fabric.Fabric"), Framework::Fabric);
  EXPECT_EQ(framework_of_package("accelerate.Accelerator"), Framework::Accelerate);
  EXPECT_EQ(framework_of_package("deepspeed.initialize"), Framework::DeepSpeed);
  EXPECT_EQ(framework_of_package("trl.SFTTrainer"), Framework::HfTrainer);
  EXPECT_EQ(framework_of_package("lightningly.x"), std::nullopt);
  EXPECT_EQ(framework_of_package("torch.nn"), std::nullopt);
}

TEST(Frameworks, LightningModuleAndTrainerSubclassesOwnTheirMethods) {
  Parsed p(
      "import lightning.pytorch as pl\n"
      "from transformers import Trainer\n"
      "class Base(pl.LightningModule): pass\n"
      "class Net(Base):\n"
      "    def training_step(self, b): pass\n"
      "class MyTrainer(Trainer):\n"
      "    def compute_loss(self, m, x): pass\n"
      "class Trainer2:\n"
      "    def fit(self): pass\n");
  auto lightning = class_owner(p.model, p.function_scope("training_step"));
  ASSERT_TRUE(lightning);
  EXPECT_EQ(lightning->framework, Framework::Lightning);
  EXPECT_EQ(lightning->by, OwnedBy::ClassBase);
  EXPECT_EQ(value_text(p, lightning->site), "(Base)");
  auto hf = class_owner(p.model, p.function_scope("compute_loss"));
  ASSERT_TRUE(hf);
  EXPECT_EQ(hf->framework, Framework::HfTrainer);
  EXPECT_FALSE(class_owner(p.model, p.function_scope("fit")));  // a hand-written trainer
}

TEST(Frameworks, BackwardReceiversByBindingThenName) {
  Parsed p(
      "import deepspeed\n"
      "def fit(model, scaler, accelerator):\n"
      "    eng, opt, _, _ = deepspeed.initialize(model=model)\n"
      "    eng.backward(loss)\n"
      "    accelerator.backward(loss)\n"
      "    scaler.scale(loss).backward()\n"
      "    loss.backward()\n");
  int scope = p.function_scope("fit");
  auto bound = backward_owner(p.model, p.find("eng", "initialize(model=model)\n"), scope);
  ASSERT_TRUE(bound);
  EXPECT_EQ(bound->framework, Framework::DeepSpeed);
  EXPECT_EQ(bound->by, OwnedBy::Binding);
  EXPECT_EQ(value_text(p, bound->site), "deepspeed.initialize(model=model)");
  auto named = backward_owner(p.model, p.find("accelerator", "eng.backward"), scope);
  ASSERT_TRUE(named);
  EXPECT_EQ(named->framework, Framework::Accelerate);
  EXPECT_EQ(named->by, OwnedBy::ReceiverName);
  EXPECT_FALSE(backward_owner(p.model, p.find("scaler", "accelerator.backward"), scope));
  EXPECT_FALSE(backward_owner(p.model, p.find("loss", "scaler.scale(loss).backward()\n    "), scope));
}

TEST(Frameworks, DescribesWhereOwnershipShows) {
  Parsed p(
      "from accelerate import Accelerator\n"
      "acc = Accelerator()\n"
      "acc.backward(loss)\n");
  auto owner = backward_owner(p.model, p.find("acc", "Accelerator()\n"), 0);
  ASSERT_TRUE(owner);
  EXPECT_EQ(describe_owner(*owner, p.src),
            "bound to `Accelerator()`, an object of Hugging Face Accelerate");
}

// --- torch facts ---------------------------------------------------------------------------

TEST(TorchFacts, DataLoaderIsReadFromItsImportBinding) {
  Parsed torch_file(
      "from torch.utils.data import DataLoader\n"
      "a = DataLoader(ds)\n");
  EXPECT_TRUE(is_torch_dataloader(torch_file.model, torch_file.find("DataLoader(ds)")));
  Parsed other(
      "from mylib.data import DataLoader\n"
      "a = DataLoader(ds)\n");
  EXPECT_FALSE(is_torch_dataloader(other.model, other.find("DataLoader(ds)")));
  Parsed monai(
      "from monai.data import DataLoader\n"
      "a = DataLoader(ds)\n");
  EXPECT_TRUE(is_torch_dataloader(monai.model, monai.find("DataLoader(ds)")));
  Parsed monai_module(
      "import monai\n"
      "a = monai.data.DataLoader(ds)\n");
  EXPECT_TRUE(is_torch_dataloader(monai_module.model, monai_module.find("monai.data.DataLoader(ds)")));
  Parsed monai_other(
      "from monai.data import Dataset\n"
      "a = Dataset(ds)\n");
  EXPECT_FALSE(is_torch_dataloader(monai_other.model, monai_other.find("Dataset(ds)")));
  Parsed local(
      "class DataLoader: pass\n"
      "a = DataLoader(ds)\n");
  EXPECT_FALSE(is_torch_dataloader(local.model, local.find("DataLoader(ds)")));
  Parsed fragment("a = DataLoader(ds)\n");
  EXPECT_TRUE(is_torch_dataloader(fragment.model, fragment.find("DataLoader(ds)")));
}

CudaTargetScan scan(const Parsed& p) {
  CudaTargetScan s(p.model);
  walk(p.model, s);
  return s;
}

TEST(TorchFacts, TargetsCudaFromCodeNeverFromComments) {
  Parsed literal("# runs on cuda\nx = t.to('cuda:1')\n");
  CudaTargetScan a = scan(literal);
  ASSERT_TRUE(a.targets_cuda());
  EXPECT_EQ(value_text(literal, a.evidence()), "'cuda:1'");
  EXPECT_EQ(a.reason(), "a CUDA device string");
  Parsed call("import torch\nn = torch.cuda.device_count()\n");
  EXPECT_EQ(scan(call).reason(), "a `torch.cuda` call");
  Parsed cpu_only("# .cuda() would be faster\ns = 'cuda is not used here'\nx = t.to('cpu')\n");
  EXPECT_FALSE(scan(cpu_only).targets_cuda());
  Parsed accel_cpu("from accelerate import Accelerator\na = Accelerator(cpu=True)\n");
  EXPECT_FALSE(scan(accel_cpu).targets_cuda());
}

TEST(TorchFacts, StringContentStripsPrefixAndQuotes) {
  Parsed p("a = f'cuda:{i}'\nb = b'cuda'\nc = \"\"\"nccl\"\"\"\n");
  EXPECT_EQ(string_content(p.find("f'cuda:{i}'"), p.src), "cuda:{i}");
  EXPECT_EQ(string_content(p.find("b'cuda'"), p.src), "");
  EXPECT_EQ(string_content(p.find("\"\"\"nccl\"\"\""), p.src), "nccl");
}

}  // namespace
}  // namespace preflight::analysis

namespace preflight::analysis {
namespace {

TEST(Frameworks, AnImportedFrameworkModuleOwnsItsBackward) {
  testing::Parsed p(
      "import torch.distributed.autograd as dist_autograd\n"
      "dist_autograd.backward(ctx, [loss])\n");
  auto owner = backward_owner(p.model, p.find("dist_autograd", "as dist_autograd\n"), 0);
  ASSERT_TRUE(owner);
  EXPECT_EQ(owner->framework, Framework::DistributedAutograd);
  EXPECT_EQ(owner->by, OwnedBy::Import);
  EXPECT_EQ(describe_owner(*owner, p.src), "`dist_autograd` is a module of distributed autograd");
}

}  // namespace
}  // namespace preflight::analysis
