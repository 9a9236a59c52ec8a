#include "analysis/provenance.h"

#include <gtest/gtest.h>

#include <string>

#include "tests/analysis/test_support.h"

namespace preflight::analysis {
namespace {

using testing::Traced;

const char* kBasics =
    "import torch\n"
    "import torch.nn as nn\n"
    "model = nn.Linear(2, 2)\n"
    "def step(x, xs, loss):\n"
    "    out = model(x)\n"
    "    scalar = model(x).item()\n"
    "    held = loss.detach()\n"
    "    count = len(xs)\n"
    "    positive = out > 0\n"
    "    dims = out.shape\n"
    "    labels = model(x).max(dim=1).indices\n"
    "    doubled = out * 2\n"
    "    literal = 3\n"
    "    return out\n";

TEST(ProvenanceTest, ForwardPassOfAModelCarriesATensorGraph) {
  Traced t(kBasics);
  Value v = t.value("model(x)", "out = ");
  EXPECT_EQ(v.graph, Graph::Yes);
  EXPECT_TRUE(v.tensor());
  EXPECT_FALSE(v.naming_only);
  ASSERT_NE(v.why, nullptr);
  EXPECT_FALSE(v.why->message.empty());
  EXPECT_FALSE(evidence_steps(v.why).empty());
  EXPECT_FALSE(t.prov.in_no_grad(t.find("model(x)", "out = ")));
}

TEST(ProvenanceTest, ItemIsFree) {
  Traced t(kBasics);
  EXPECT_EQ(t.value("model(x).item()").graph, Graph::Free);
  EXPECT_EQ(t.value("model(x)", "scalar = ").graph, Graph::Yes);  // the receiver still has one
}

TEST(ProvenanceTest, DetachIsFree) {
  Traced t(kBasics);
  EXPECT_EQ(t.value("loss.detach()").graph, Graph::Free);
}

TEST(ProvenanceTest, LenIsFree) {
  Traced t(kBasics);
  EXPECT_EQ(t.value("len(xs)").graph, Graph::Free);
}

TEST(ProvenanceTest, ComparisonIsFree) {
  Traced t(kBasics);
  EXPECT_EQ(t.value("out > 0").graph, Graph::Free);
}

TEST(ProvenanceTest, ShapeAttributeIsFree) {
  Traced t(kBasics);
  EXPECT_EQ(t.value("out.shape").graph, Graph::Free);
}

TEST(ProvenanceTest, IndicesOfAnIntegerReductionAreFree) {
  Traced t(kBasics);
  EXPECT_EQ(t.value("model(x).max(dim=1).indices").graph, Graph::Free);
}

TEST(ProvenanceTest, ArithmeticOnAGraphKeepsIt) {
  Traced t(kBasics);
  Value v = t.value("out * 2");
  EXPECT_EQ(v.graph, Graph::Yes);
  EXPECT_TRUE(v.tensor());
}

TEST(ProvenanceTest, LiteralIsFree) {
  Traced t(kBasics);
  EXPECT_EQ(t.value("3", "literal = ").graph, Graph::Free);
}

TEST(ProvenanceTest, ReturnValueOfAForwardPassHasAGraph) {
  Traced t(kBasics);
  EXPECT_EQ(t.prov.return_value(t.function_index("step")).graph, Graph::Yes);
}

TEST(ProvenanceTest, ValueAssignedUnderNoGradIsFreeAfterTheBlock) {
  Traced t(
      "import torch\n"
      "def evaluate(model, x):\n"
      "    with torch.no_grad():\n"
      "        pred = model(x)\n"
      "    used = pred\n"
      "    again = model(x)\n");
  EXPECT_EQ(t.value("pred", "used = ").graph, Graph::Free);
  EXPECT_TRUE(t.prov.in_no_grad(t.find("model(x)")));
  EXPECT_TRUE(t.prov.in_no_grad(t.find("pred = model(x)")));
  EXPECT_FALSE(t.prov.in_no_grad(t.find("used = pred")));
  EXPECT_EQ(t.value("model(x)", "again = ").graph, Graph::Yes);  // autograd back on
}

TEST(ProvenanceTest, InferenceModeAndDecoratorsDisableTheGraph) {
  Traced t(
      "import torch\n"
      "def a(model, x):\n"
      "    with torch.inference_mode():\n"
      "        ya = model(x)\n"
      "@torch.no_grad()\n"
      "def b(model, x):\n"
      "    yb = model(x)\n"
      "@torch.no_grad\n"
      "def c(model, x):\n"
      "    yc = model(x)\n");
  EXPECT_EQ(t.value("model(x)", "ya = ").graph, Graph::Free);
  EXPECT_EQ(t.value("model(x)", "yb = ").graph, Graph::Free);
  EXPECT_EQ(t.value("model(x)", "yc = ").graph, Graph::Free);
  EXPECT_TRUE(t.prov.in_no_grad(t.find("model(x)", "yb = ")));
  EXPECT_TRUE(t.prov.in_no_grad(t.find("model(x)", "yc = ")));
}

TEST(ProvenanceTest, StatementLevelSetGradEnabledFalseDisablesLaterForwardPasses) {
  Traced t(
      "import torch\n"
      "def infer(model, x):\n"
      "    before = model(x)\n"
      "    torch.set_grad_enabled(False)\n"
      "    after = model(x)\n"
      "    torch.set_grad_enabled(True)\n"
      "    restored = model(x)\n");
  EXPECT_EQ(t.value("model(x)", "before = ").graph, Graph::Yes);
  EXPECT_FALSE(t.prov.in_no_grad(t.find("model(x)", "before = ")));
  EXPECT_EQ(t.value("model(x)", "after = ").graph, Graph::Free);
  EXPECT_TRUE(t.prov.in_no_grad(t.find("model(x)", "after = ")));
  EXPECT_TRUE(t.prov.in_no_grad(t.find("after = model(x)")));
  EXPECT_EQ(t.value("model(x)", "restored = ").graph, Graph::Yes);
  EXPECT_FALSE(t.prov.in_no_grad(t.find("model(x)", "restored = ")));
}

TEST(ProvenanceTest, EnableGradInsideANoGradFunctionRestoresTheGraph) {
  Traced t(
      "import torch\n"
      "@torch.no_grad()\n"
      "def attack(model, x):\n"
      "    with torch.enable_grad():\n"
      "        inside = model(x)\n"
      "    outside = model(x)\n");
  EXPECT_EQ(t.value("model(x)", "inside = ").graph, Graph::Yes);
  EXPECT_EQ(t.value("model(x)", "outside = ").graph, Graph::Free);
}

TEST(ProvenanceTest, InferenceModeFalseDoesNotDisableTheGraph) {
  Traced t(
      "import torch\n"
      "def f(model, x):\n"
      "    with torch.inference_mode(False):\n"
      "        a = model(x)\n"
      "    with torch.inference_mode(mode=False):\n"
      "        b = model(x)\n");
  EXPECT_EQ(t.value("model(x)", "a = ").graph, Graph::Yes);
  EXPECT_EQ(t.value("model(x)", "b = ").graph, Graph::Yes);
}

TEST(ProvenanceTest, SetGradEnabledFalseOnOnlyOneBranchDoesNotProveLaterCodeFree) {
  Traced t(
      "import torch\n"
      "def f(model, x, frozen):\n"
      "    if frozen:\n"
      "        torch.set_grad_enabled(False)\n"
      "    y = model(x)\n");
  // On the path where `frozen` is false autograd is on, so `y` may carry a graph.
  EXPECT_NE(t.value("model(x)", "y = ").graph, Graph::Free);
  EXPECT_FALSE(t.prov.in_no_grad(t.find("model(x)", "y = ")));
}

TEST(ProvenanceTest, SetGradEnabledFalseAsContextManagerIsScoped) {
  Traced t(
      "import torch\n"
      "def infer(model, x):\n"
      "    with torch.set_grad_enabled(False):\n"
      "        inside = model(x)\n"
      "    outside = model(x)\n");
  EXPECT_EQ(t.value("model(x)", "inside = ").graph, Graph::Free);
  EXPECT_EQ(t.value("model(x)", "outside = ").graph, Graph::Yes);
}

TEST(ProvenanceTest, GradEnabledRebindingAfterNoGradRestoresTheGraph) {
  Traced t(
      "import torch\n"
      "import torch.nn as nn\n"
      "frozen = nn.Linear(2, 2)\n"
      "head = nn.Linear(2, 2)\n"
      "def run(x):\n"
      "    with torch.no_grad():\n"
      "        z = frozen(x)\n"
      "    z = head(z)\n"
      "    return z\n");
  EXPECT_EQ(t.value("frozen(x)").graph, Graph::Free);
  EXPECT_EQ(t.value("z", "head(").graph, Graph::Free);  // the argument: computed under no_grad
  EXPECT_EQ(t.value("head(z)").graph, Graph::Yes);
  EXPECT_EQ(t.value("z", "return ").graph, Graph::Yes);
  EXPECT_EQ(t.prov.return_value(t.function_index("run")).graph, Graph::Yes);
}

TEST(ProvenanceTest, LaterRebindingDoesNotChangeAnEarlierRead) {
  Traced t(
      "def fit(model, loader):\n"
      "    kept = []\n"
      "    for x in loader:\n"
      "        loss = model(x).sum()\n"
      "        kept.append(loss)\n"
      "        loss = loss.item()\n"
      "    return kept\n");
  Value appended = t.value("loss", "kept.append(");
  EXPECT_EQ(appended.graph, Graph::Yes);
  EXPECT_TRUE(appended.tensor());
  EXPECT_EQ(t.value("loss.item()").graph, Graph::Free);
  Value kept = t.value("kept", "return ");
  EXPECT_EQ(kept.graph, Graph::Yes);  // the list now holds graph-carrying losses
  EXPECT_FALSE(kept.tensor());          // a list, not a tensor
}

TEST(ProvenanceTest, LaterRebindingDoesNotChangeAnEarlierReadStraightLine) {
  Traced t(
      "def fit(model, x):\n"
      "    kept = []\n"
      "    loss = model(x).sum()\n"
      "    kept.append(loss)\n"
      "    loss = loss.item()\n"
      "    final = loss\n");
  EXPECT_EQ(t.value("loss", "kept.append(").graph, Graph::Yes);
  EXPECT_EQ(t.value("loss", "final = ").graph, Graph::Free);
}

TEST(ProvenanceTest, BranchesJoin) {
  Traced t(
      "def f(model, x, flag):\n"
      "    if flag:\n"
      "        y = model(x)\n"
      "    else:\n"
      "        y = 0.0\n"
      "    merged = y\n"
      "    if flag:\n"
      "        w = 1\n"
      "    else:\n"
      "        w = 2\n"
      "    plain = w\n");
  EXPECT_EQ(t.value("y", "merged = ").graph, Graph::Yes);
  EXPECT_EQ(t.value("w", "plain = ").graph, Graph::Free);
}

const char* kHelpers =
    "import torch.nn as nn\n"
    "net = nn.Linear(2, 2)\n"
    "def forward_once(x):\n"
    "    return net(x)\n"
    "def scalar_once(x):\n"
    "    return net(x).item()\n"
    "def caller(x):\n"
    "    a = forward_once(x)\n"
    "    b = scalar_once(x)\n";

TEST(ProvenanceTest, LocalHelperReturningAForwardPassGivesTheCallerAGraph) {
  Traced t(kHelpers);
  Value v = t.value("forward_once(x)", "a = ");
  EXPECT_EQ(v.graph, Graph::Yes);
  EXPECT_EQ(t.prov.return_value(t.function_index("forward_once")).graph, Graph::Yes);
}

TEST(ProvenanceTest, LocalHelperReturningItemIsFree) {
  Traced t(kHelpers);
  EXPECT_EQ(t.value("scalar_once(x)", "b = ").graph, Graph::Free);
  EXPECT_EQ(t.prov.return_value(t.function_index("scalar_once")).graph, Graph::Free);
}

TEST(ProvenanceTest, HelperReturningATupleGivesEachTargetItsElement) {
  Traced t(
      "import torch.nn as nn\n"
      "net = nn.Linear(2, 2)\n"
      "def pair(x):\n"
      "    out = net(x)\n"
      "    return out, out.item()\n"
      "def caller(x):\n"
      "    graph_part, number = pair(x)\n"
      "    use_graph = graph_part\n"
      "    use_number = number\n");
  EXPECT_EQ(t.value("graph_part", "use_graph = ").graph, Graph::Yes);
  EXPECT_EQ(t.value("number", "use_number = ").graph, Graph::Free);
}

TEST(ProvenanceTest, RecursiveHelpersTerminate) {
  Traced t(
      "import torch.nn as nn\n"
      "net = nn.Linear(2, 2)\n"
      "def ping(x, n):\n"
      "    if n:\n"
      "        return pong(x, n - 1)\n"
      "    return net(x)\n"
      "def pong(x, n):\n"
      "    return ping(x, n)\n"
      "def caller(x):\n"
      "    r = ping(x, 3)\n");
  // One of them returns a forward pass on some path, and nothing proves the other free.
  EXPECT_NE(t.value("ping(x, 3)").graph, Graph::Free);
  EXPECT_EQ(t.prov.return_value(t.function_index("ping")).graph, Graph::Yes);
}

TEST(ProvenanceTest, BackwardConsumesTheGraphOfTheLossReadLater) {
  Traced t(
      "def train(model, x, opt):\n"
      "    loss = model(x).sum()\n"
      "    before = loss\n"
      "    loss.backward()\n"
      "    report = loss\n");
  Value before = t.value("loss", "before = ");
  EXPECT_EQ(before.graph, Graph::Yes);
  EXPECT_EQ(before.consumed, nullptr);
  Value after = t.value("loss", "report = ");
  EXPECT_EQ(after.graph, Graph::Yes);
  EXPECT_NE(after.consumed, nullptr);
  EXPECT_EQ(t.value("loss.backward()").graph, Graph::Free);
}

TEST(ProvenanceTest, BackwardThroughAWrapperConsumesItsArgument) {
  Traced t(
      "def train(model, x, accelerator):\n"
      "    loss = model(x).mean()\n"
      "    accelerator.backward(loss)\n"
      "    report = loss\n");
  Value after = t.value("loss", "report = ");
  EXPECT_EQ(after.graph, Graph::Yes);
  EXPECT_NE(after.consumed, nullptr);
}

TEST(ProvenanceTest, BackwardedNameIsShownToCarryAGraph) {
  // Nothing about `result` is visible except that the unit calls `result.backward()`.
  Traced t(
      "def train(thing, x):\n"
      "    result = thing.compute(x)\n"
      "    seen = result\n"
      "    result.backward()\n");
  EXPECT_EQ(t.value("result", "seen = ").graph, Graph::Yes);
}

TEST(ProvenanceTest, AutogradGradWithCreateGraphIsAGraphButNotATensor) {
  Traced t(
      "import torch\n"
      "def penalty(model, x):\n"
      "    out = model(x)\n"
      "    g = torch.autograd.grad(out.sum(), x, create_graph=True)\n"
      "    h = torch.autograd.grad(out.sum(), x)\n");
  Value g = t.value("torch.autograd.grad(out.sum(), x, create_graph=True)");
  EXPECT_EQ(g.graph, Graph::Yes);
  EXPECT_FALSE(g.tensor());
  EXPECT_EQ(t.value("torch.autograd.grad(out.sum(), x)").graph, Graph::Free);
}

TEST(ProvenanceTest, RequiresGradFactoryStartsAGraph) {
  Traced t(
      "import torch\n"
      "w = torch.zeros(3, requires_grad=True)\n"
      "c = torch.zeros(3)\n");
  Value w = t.value("torch.zeros(3, requires_grad=True)");
  EXPECT_EQ(w.graph, Graph::Yes);
  EXPECT_TRUE(w.tensor());
  EXPECT_EQ(t.value("torch.zeros(3)").graph, Graph::Free);
}

TEST(ProvenanceTest, LossLikeNameHoldingACallIsANamingOnlyGraph) {
  Traced t(
      "import torch\n"
      "def f(compute, x):\n"
      "    total_loss = compute(x)\n"
      "    seen = total_loss\n");
  Value v = t.value("total_loss", "seen = ");
  EXPECT_EQ(v.graph, Graph::Yes);
  EXPECT_TRUE(v.naming_only);
}

TEST(ProvenanceTest, ExpressionsInsideLambdasAreNeverEvaluated) {
  Traced t("def f(model):\n    g = lambda q: model(q)\n");
  EXPECT_EQ(t.prov.value_of(t.find("model(q)")), nullptr);
}

TEST(ProvenanceTest, JoinPrefersAGraphAndUnknownBeatsFree) {
  Value yes = Value::graph_of(nullptr, Type::Tensor);
  EXPECT_EQ(join(yes, Value::free()).graph, Graph::Yes);
  EXPECT_EQ(join(Value::free(), yes).graph, Graph::Yes);
  EXPECT_EQ(join(Value::unknown(), Value::free()).graph, Graph::Unknown);
  EXPECT_EQ(join(Value::free(), Value::free()).graph, Graph::Free);
  Value named = Value::graph_of(nullptr, Type::Tensor, /*naming_only=*/true);
  EXPECT_FALSE(join(named, yes).naming_only);  // real evidence wins over naming
  Value not_tensor = Value::graph_of(nullptr, Type::Tensors);
  EXPECT_FALSE(join(yes, not_tensor).tensor());
}

TEST(ProvenanceTest, EvidenceStepsAreOldestFirstAndLimited) {
  auto a = std::make_shared<const EvidenceNode>(EvidenceNode{{0, 1}, "first", nullptr});
  auto b = std::make_shared<const EvidenceNode>(EvidenceNode{{2, 3}, "second", a});
  auto c = std::make_shared<const EvidenceNode>(EvidenceNode{{4, 5}, "third", b});
  std::vector<EvidenceStep> all = evidence_steps(c);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].message, "first");
  EXPECT_EQ(all[2].message, "third");
  std::vector<EvidenceStep> two = evidence_steps(c, 2);
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[0].message, "second");
  EXPECT_EQ(two[1].message, "third");
  EXPECT_TRUE(evidence_steps(nullptr).empty());
}

}  // namespace
}  // namespace preflight::analysis

// Issue 23: what a value is comes from bindings, and only tensors carry a graph.
namespace preflight::analysis {
namespace {

const char* kTypes =
    "import time\n"
    "import numpy as np\n"
    "import torch\n"
    "import torch.nn as nn\n"
    "import torch.utils.benchmark as benchmark\n"
    "from mylib import bench, utils\n"
    "class Net(nn.Module):\n"
    "    def forward(self, x):\n"
    "        return x.relu()\n"
    "def run(xs):\n"
    "    w = torch.zeros(3, requires_grad=True)\n"
    "    net = Net()\n"
    "    layer = nn.LSTM(3, 3)\n"
    "    opt = torch.optim.SGD([w], lr=0.1)\n"
    "    out = (w * 2).sum()\n"
    "    t0 = time.perf_counter()\n"
    "    arr = out.cpu().numpy()\n"
    "    mean = np.mean(xs)\n"
    "    timer = benchmark.Timer(stmt='f(w)', globals={'w': w})\n"
    "    ms = bench(net, w)\n"
    "    item = utils.item(out)\n"
    "    stacked = torch.stack([out, out])\n"
    "    y = net(w)\n"
    "    h = layer(w)\n"
    "    v = float(out)\n"
    "    return t0, arr, mean, timer, ms, item, stacked, y, h, v, opt\n";

TEST(ProvenanceTypes, LibraryResultsAreTypedByWhatTheLibraryIs) {
  testing::Traced t(kTypes);
  EXPECT_EQ(t.value("time.perf_counter()").type, Type::Number);
  EXPECT_EQ(t.value("time.perf_counter()").graph, Graph::Free);
  EXPECT_EQ(t.value("out.cpu().numpy()").type, Type::Array);
  EXPECT_EQ(t.value("out.cpu().numpy()").graph, Graph::Free);
  EXPECT_EQ(t.value("np.mean(xs)").type, Type::Array);
  EXPECT_EQ(t.value("float(out)").type, Type::Number);
  // Constructing a torch class keeps no graph of its arguments, however they were made.
  EXPECT_EQ(t.value("torch.optim.SGD([w], lr=0.1)").graph, Graph::Free);
  EXPECT_EQ(t.value("torch.optim.SGD([w], lr=0.1)").type, Type::Object);
  EXPECT_EQ(t.value("benchmark.Timer(stmt='f(w)', globals={'w': w})").graph, Graph::Free);
}

TEST(ProvenanceTypes, ACalleeTheAnalysisCannotSeeGivesUnknownNotItsArgumentsGraph) {
  testing::Traced t(kTypes);
  EXPECT_EQ(t.value("bench(net, w)").graph, Graph::Unknown);
  EXPECT_FALSE(t.value("utils.item(out)").has_graph());  // named like `.item()`: never a graph
}

TEST(ProvenanceTypes, TorchFunctionsAndLayerOutputsAreProvenTensors) {
  testing::Traced t(kTypes);
  Value stacked = t.value("torch.stack([out, out])");
  EXPECT_TRUE(stacked.has_graph());
  EXPECT_TRUE(stacked.tensor());
  EXPECT_TRUE(stacked.proven());
  // A local module whose forward returns a tensor gives a tensor; an LSTM gives a tuple.
  EXPECT_EQ(t.value("net(w)").type, Type::Tensor);
  EXPECT_TRUE(t.value("net(w)").proven());
  EXPECT_EQ(t.value("layer(w)").type, Type::Tensors);
}

TEST(ProvenanceTypes, AModelKnownOnlyByItsNameIsAWeakStep) {
  testing::Traced t(
      "import torch\n"
      "def f(model, x):\n"
      "    out = model(x)\n");
  Value v = t.value("model(x)");
  EXPECT_TRUE(v.has_graph());
  EXPECT_FALSE(v.proven());
  ASSERT_NE(v.weak, nullptr);
  EXPECT_NE(v.weak->message.find("naming heuristic"), std::string::npos);
}

}  // namespace
}  // namespace preflight::analysis
