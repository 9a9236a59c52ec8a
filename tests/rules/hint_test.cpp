// Hints say what to do with the code as written: advice about an argument the call does not
// pass reads as a misreport.
#include <gtest/gtest.h>

#include <string>

#include "rules/engine.h"

namespace preflight::tests {
namespace {

std::string tg012_hint(const std::string& loader_args) {
  std::string text =
      "import torch.distributed as dist\n"
      "from torch.utils.data import DataLoader, TensorDataset\n"
      "def main(x, y, net):\n"
      "    dist.init_process_group('nccl')\n"
      "    loader = DataLoader(TensorDataset(x, y)" + loader_args + ")\n"
      "    for a, b in loader:\n"
      "        net(a).sum().backward()\n";
  rules::CheckOptions options;
  options.select = {"TG012"};
  rules::CheckResult result = rules::check_source(text, options);
  return result.findings.size() == 1 ? result.findings[0].hint : "no single finding";
}

TEST(Hints, TG012MentionsShuffleOnlyWhenTheLoaderShuffles) {
  std::string shuffled = tg012_hint(", batch_size=8, shuffle=True");
  EXPECT_NE(shuffled.find("instead of `shuffle=True`"), std::string::npos) << shuffled;
  std::string plain = tg012_hint(", batch_size=8");
  EXPECT_EQ(plain.find("shuffle"), std::string::npos) << plain;
  EXPECT_NE(plain.find("sampler=DistributedSampler(dataset)"), std::string::npos) << plain;
  EXPECT_NE(plain.find("set_epoch"), std::string::npos) << plain;
}

}  // namespace
}  // namespace preflight::tests
