#include "estimator/job.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <utility>

#include "estimator/catalog.h"

namespace preflight::estimator {
namespace {

template <class E>
struct Spelling {
  std::string_view text;
  E value;
};

// The first spelling of each value is its canonical name; the rest are accepted aliases.
constexpr Spelling<Precision> kPrecisions[] = {
    {"fp32", Precision::Fp32},          {"amp", Precision::Amp},
    {"amp-fp16", Precision::AmpFp16},   {"amp-bf16", Precision::AmpBf16},
    {"pure-fp16", Precision::PureFp16}, {"pure-bf16", Precision::PureBf16},
    {"fp16-master", Precision::Fp16Master}, {"fp16", Precision::PureFp16},
    {"bf16", Precision::PureBf16},      {"bf16-true", Precision::PureBf16},
    {"16-mixed", Precision::AmpFp16},   {"bf16-mixed", Precision::AmpBf16},
    {"float32", Precision::Fp32},
};
constexpr Spelling<Optimizer> kOptimizers[] = {
    {"sgd", Optimizer::Sgd},           {"sgd-momentum", Optimizer::SgdMomentum},
    {"adam", Optimizer::Adam},         {"adamw", Optimizer::AdamW},
    {"adamw-8bit", Optimizer::AdamW8bit}, {"paged-adamw-8bit", Optimizer::PagedAdamW8bit},
    {"adafactor", Optimizer::Adafactor}, {"lion", Optimizer::Lion},
    {"lion-8bit", Optimizer::Lion8bit}, {"rmsprop", Optimizer::RmsProp},
    {"adagrad", Optimizer::Adagrad},   {"adamw8bit", Optimizer::AdamW8bit},
    {"adam8bit", Optimizer::AdamW8bit}, {"adamw-bnb-8bit", Optimizer::AdamW8bit},
    {"pagedadamw8bit", Optimizer::PagedAdamW8bit}, {"nadam", Optimizer::Adam},
    {"radam", Optimizer::Adam},        {"lion8bit", Optimizer::Lion8bit},
    {"paged-adamw", Optimizer::AdamW}, {"paged-adamw-32bit", Optimizer::AdamW},
};
constexpr Spelling<OptimizerImpl> kOptimizerImpls[] = {
    {"foreach", OptimizerImpl::Foreach}, {"fused", OptimizerImpl::Fused},
    {"for-loop", OptimizerImpl::ForLoop}, {"in-backward", OptimizerImpl::InBackward},
    {"forloop", OptimizerImpl::ForLoop},
};
constexpr Spelling<Sharding> kShardings[] = {
    {"none", Sharding::None},           {"ddp", Sharding::Ddp},
    {"zero-1", Sharding::Zero1},        {"zero-2", Sharding::Zero2},
    {"zero-3", Sharding::Zero3},        {"fsdp", Sharding::FsdpFull},
    {"fsdp-grad-op", Sharding::FsdpGradOp}, {"fsdp-hybrid", Sharding::FsdpHybrid},
    {"fsdp2", Sharding::Fsdp2},         {"fsdp-full", Sharding::FsdpFull},
    {"full-shard", Sharding::FsdpFull}, {"shard-grad-op", Sharding::FsdpGradOp},
    {"hsdp", Sharding::FsdpHybrid},     {"hybrid-shard", Sharding::FsdpHybrid},
    {"zero1", Sharding::Zero1},         {"zero2", Sharding::Zero2},
    {"zero3", Sharding::Zero3},
};
constexpr Spelling<Attention> kAttentions[] = {
    {"eager", Attention::Eager}, {"sdpa", Attention::Sdpa}, {"flash", Attention::Flash},
    {"flash-attention-2", Attention::Flash}, {"flash-attn", Attention::Flash},
};
constexpr Spelling<Quantization> kQuantizations[] = {
    {"none", Quantization::None}, {"int8", Quantization::Int8}, {"nf4", Quantization::Nf4},
    {"fp8", Quantization::Fp8},   {"8bit", Quantization::Int8}, {"4bit", Quantization::Nf4},
};
constexpr Spelling<Peft> kPefts[] = {{"none", Peft::None}, {"lora", Peft::Lora}, {"qlora", Peft::Qlora}};
constexpr Spelling<Head> kHeads[] = {
    {"default", Head::CatalogDefault}, {"causal-lm", Head::CausalLm},
    {"masked-lm", Head::MaskedLm},     {"sequence-classification", Head::SequenceClassification},
    {"none", Head::None},              {"base", Head::None},
    {"classification", Head::SequenceClassification},
};
constexpr Spelling<LossImpl> kLossImpls[] = {{"full", LossImpl::Full}, {"chunked", LossImpl::Chunked}};

template <class E, std::size_t N>
std::string_view name_of(const Spelling<E> (&table)[N], E value) {
  for (const auto& s : table)
    if (s.value == value) return s.text;
  return "?";
}

template <class E, std::size_t N>
std::optional<E> parse_in(const Spelling<E> (&table)[N], std::string_view text) {
  std::string key = normalize_name(text);
  for (const auto& s : table)
    if (s.text == key) return s.value;
  return std::nullopt;
}

}  // namespace

std::string_view source_kind_name(SourceKind k) {
  switch (k) {
    case SourceKind::Default: return "default";
    case SourceKind::CommandLine: return "command line";
    case SourceKind::Script: return "script";
    case SourceKind::Derived: return "derived";
    case SourceKind::Unknown: return "unknown";
  }
  return "?";
}

std::string_view precision_name(Precision p) { return name_of(kPrecisions, p); }
std::string_view optimizer_name(Optimizer o) { return name_of(kOptimizers, o); }
std::string_view optimizer_impl_name(OptimizerImpl o) { return name_of(kOptimizerImpls, o); }
std::string_view sharding_name(Sharding s) { return name_of(kShardings, s); }
std::string_view attention_name(Attention a) { return name_of(kAttentions, a); }
std::string_view quantization_name(Quantization q) { return name_of(kQuantizations, q); }
std::string_view peft_name(Peft p) { return name_of(kPefts, p); }
std::string_view loss_impl_name(LossImpl l) { return name_of(kLossImpls, l); }
std::string_view head_name(Head h) { return name_of(kHeads, h); }

std::optional<Precision> parse_precision(std::string_view s) { return parse_in(kPrecisions, s); }
std::optional<Optimizer> parse_optimizer(std::string_view s) { return parse_in(kOptimizers, s); }
std::optional<OptimizerImpl> parse_optimizer_impl(std::string_view s) { return parse_in(kOptimizerImpls, s); }
std::optional<Sharding> parse_sharding(std::string_view s) { return parse_in(kShardings, s); }
std::optional<Attention> parse_attention(std::string_view s) { return parse_in(kAttentions, s); }
std::optional<Quantization> parse_quantization(std::string_view s) { return parse_in(kQuantizations, s); }
std::optional<Peft> parse_peft(std::string_view s) { return parse_in(kPefts, s); }
std::optional<Head> parse_head(std::string_view s) { return parse_in(kHeads, s); }

std::optional<int64_t> parse_count(std::string_view text) {
  std::string digits;
  for (char c : text)
    if (c != ',' && c != '_' && !std::isspace(static_cast<unsigned char>(c)))
      digits += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  double scale = 1.0;
  if (!digits.empty()) {
    switch (digits.back()) {
      case 'b': scale = 1e9; break;
      case 'm': scale = 1e6; break;
      case 'k': scale = 1e3; break;
      default: break;
    }
    if (scale != 1.0) digits.pop_back();
  }
  if (digits.empty()) return std::nullopt;
  double value = 0.0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  // Written so that NaN fails it too; "0.4" is no count (it would round to 0 parameters).
  if (ec != std::errc() || end != digits.data() + digits.size() || !(value * scale >= 0.5) ||
      value * scale > double(kMaxCount))
    return std::nullopt;
  return static_cast<int64_t>(std::llround(value * scale));
}

}  // namespace preflight::estimator
