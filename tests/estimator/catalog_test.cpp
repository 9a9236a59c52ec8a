#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "estimator/catalog.h"
#include "estimator/embedded_data.h"

namespace preflight::estimator {
namespace {

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(Catalog, EmbeddedDataIsTheDataFilesByteForByte) {
  const std::string dir = std::string(PF_SOURCE_DIR) + "/estimator/data/";
  EXPECT_EQ(embedded::architectures_json(), read(dir + "architectures.json"));
  EXPECT_EQ(embedded::gpus_json(), read(dir + "gpus.json"));
  EXPECT_EQ(embedded::instances_json(), read(dir + "instances.json"));
}

TEST(Catalog, BuiltInTablesAreComplete) {
  const Catalog& c = builtin_catalog();
  EXPECT_EQ(c.architectures().size(), 59u);
  EXPECT_EQ(c.gpus().size(), 69u);
  EXPECT_EQ(c.instances().size(), 132u);
  for (const Instance& i : c.instances()) EXPECT_NE(c.gpu_by_id(i.gpu), nullptr) << i.id << " names an unknown GPU";
}

TEST(Catalog, NormalisationIsTheSameForStoredNamesAndQueries) {
  EXPECT_EQ(normalize_name("  Standard_NC24ads_A100_v4 "), "standard-nc24ads-a100-v4");
  EXPECT_EQ(normalize_name("A100 80GB"), "a10080gb");
  const Catalog& c = builtin_catalog();
  // A name written with spaces loses them, and with them the hyphen of the stored id.
  for (const auto& [q, id] : {std::pair{"Tesla T4", "t4"}, {"A100 80GB", "a100-80gb"}, {"a100-80gb", "a100-80gb"}}) {
    const Gpu* g = c.find_gpu(q);
    ASSERT_NE(g, nullptr) << q;
    EXPECT_EQ(g->id, id) << q;
  }
  // Azure sizes are stored with underscores: the reference could never resolve them.
  for (const char* q : {"Standard_NC24ads_A100_v4", "standard-nc24ads-a100-v4", "STANDARD_NC24ADS_A100_V4"}) {
    const Instance* i = c.find_instance(q);
    ASSERT_NE(i, nullptr) << q;
    EXPECT_EQ(i->gpu, "a100-80gb");
  }
}

TEST(Catalog, ModelReferencesResolveByIdAliasAndSuffixRules) {
  const Catalog& c = builtin_catalog();
  auto id_of = [&](const char* ref) {
    const Architecture* a = c.find_architecture(ref);
    return a ? a->id : std::string("(none)");
  };
  EXPECT_EQ(id_of("gpt2"), "gpt2");
  EXPECT_EQ(id_of("openai-community/gpt2"), "gpt2");
  EXPECT_EQ(id_of("meta-llama/Llama-2-7b-hf"), "llama-2-7b");
  EXPECT_EQ(id_of("someone/llama-2-7b-chat"), "llama-2-7b");  // part after '/', then one suffix removed
  EXPECT_EQ(id_of("Mistral_7B"), "mistral-7b");
  EXPECT_EQ(id_of("mistralai/Mistral-7B-v0.1"), "mistral-7b");
  EXPECT_EQ(id_of("not-a-model"), "(none)");
}

TEST(Catalog, MalformedDataIsAnErrorNotAThrow) {
  std::string error;
  EXPECT_FALSE(Catalog::parse("{", "{}", "{}", error).has_value());
  EXPECT_FALSE(error.empty());
  EXPECT_FALSE(Catalog::parse(R"({"models": 3})", R"({"gpus": []})", R"({"instances": []})", error).has_value());
  // Wrong field types read as absent instead of throwing.
  auto c = Catalog::parse(R"({"models": {"m": {"params": "many", "shape": {"hidden": "x"}}}})",
                          R"({"gpus": [{"id": 5}]})", R"({"instances": []})", error);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->architectures().at(0).params, 0);
}

}  // namespace
}  // namespace preflight::estimator
