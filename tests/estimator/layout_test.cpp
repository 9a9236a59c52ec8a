#include <gtest/gtest.h>

#include <cmath>

#include "estimator/catalog.h"
#include "estimator/layout.h"

namespace preflight::estimator {
namespace {

// Entries the catalogue stores without any architecture (their counts are published only).
bool has_no_architecture(const Architecture& a) { return !a.shape && !a.cnn; }

TEST(Layout, EveryBuiltInArchitectureMatchesItsPublishedCountWithinOnePercent) {
  int checked = 0;
  for (const Architecture& a : builtin_catalog().architectures()) {
    std::optional<int64_t> computed;
    if (auto layout = transformer_layout(a)) computed = layout->total_params();
    else computed = cnn_parameter_count(a);
    if (has_no_architecture(a)) {
      EXPECT_FALSE(computed.has_value()) << a.id;
      continue;
    }
    ASSERT_TRUE(computed.has_value()) << a.id << " has a shape but no layout";
    const double error = std::fabs(double(*computed) - double(a.params)) / double(a.params);
    EXPECT_LT(error, 0.01) << a.id << ": computed " << *computed << ", published " << a.params;
    ++checked;
  }
  EXPECT_EQ(checked, 57);  // 59 entries; CLIP and the SD UNet carry no architecture
}

TEST(Layout, MostCountsAreExact) {
  const Catalog& c = builtin_catalog();
  for (const char* id : {"gpt2", "bert-base-uncased", "llama-2-7b", "llama-3-8b", "mixtral-8x7b", "gemma-7b",
                         "whisper-small", "t5-small", "vit-base-patch16-224", "phi-2", "gpt-j-6b", "resnet50",
                         "densenet121", "efficientnet_b0", "convnext_tiny", "mobilenet_v2", "vgg16"}) {
    const Architecture* a = c.find_architecture(id);
    ASSERT_NE(a, nullptr) << id;
    auto layout = transformer_layout(*a);
    const int64_t computed = layout ? layout->total_params() : cnn_parameter_count(*a).value_or(0);
    EXPECT_EQ(computed, a->params) << id;
  }
}

TEST(Layout, LoraTrainableCountsAreExact) {
  const Catalog& c = builtin_catalog();
  // peft's print_trainable_parameters for these configurations.
  auto llama = transformer_layout(*c.find_architecture("llama-2-7b"));
  EXPECT_EQ(lora_plan(*llama, 16, {}).trainable, 16 * (4096 + 4096) * 2 * 32);  // q_proj, v_proj: 8,388,608
  EXPECT_EQ(lora_plan(*llama, 8, {"q_proj", "k_proj", "v_proj", "o_proj"}).trainable, 8 * 8192 * 4 * 32);
  // all-linear adds the MLP: gate and up (4096 -> 11008), down (11008 -> 4096).
  EXPECT_EQ(lora_plan(*llama, 1, {"all-linear"}).trainable, (4 * 8192 + 3 * (4096 + 11008)) * 32);
  auto gpt2 = transformer_layout(*c.find_architecture("gpt2"));
  EXPECT_EQ(lora_plan(*gpt2, 8, {}).trainable, 8 * (768 + 2304) * 12);  // c_attn: 294,912
  // GQA: k/v project to kv_heads x head_dim = 1024 on Llama-3-8B.
  auto llama3 = transformer_layout(*c.find_architecture("llama-3-8b"));
  EXPECT_EQ(lora_plan(*llama3, 16, {}).trainable, 16 * ((4096 + 4096) + (4096 + 1024)) * 32);
}

TEST(Layout, MatmulAndQuantisableCountsExcludeEmbeddingsAndNorms) {
  auto llama = transformer_layout(*builtin_catalog().find_architecture("llama-2-7b"));
  const int64_t block_linears = (4 * 4096LL * 4096 + 3 * 4096LL * 11008) * 32;
  EXPECT_EQ(llama->quantizable_params(), block_linears);
  EXPECT_EQ(llama->matmul_weight_params(), block_linears + 32000LL * 4096);  // plus the untied head
  EXPECT_EQ(llama->largest_block_params(), 4 * 4096LL * 4096 + 3 * 4096LL * 11008 + 2 * 4096);
}

}  // namespace
}  // namespace preflight::estimator
