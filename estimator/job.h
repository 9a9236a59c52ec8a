// What a run looks like to the estimator: the job specification. Every field carries its
// value AND where that value came from (a command-line flag, a default, a byte range of the
// script, or "unknown" with the expression that blocked reading it), because the report
// prints the source of every number and the interval widens for every field that was not
// stated. The CLI fills it from flags today; the script reader (a later issue) fills it from
// a training script, keeping the byte ranges for code actions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/findings.h"

namespace preflight::estimator {

enum class SourceKind {
  Default,      // nobody said; the documented default applies (interval widens where it matters)
  CommandLine,  // an explicit flag / editor setting
  Script,       // read from the script at `range`
  Derived,      // computed from other fields (e.g. world size from the instance)
  Unknown,      // the script sets it, but the value could not be determined
};
std::string_view source_kind_name(SourceKind k);

struct Source {
  SourceKind kind = SourceKind::Default;
  std::string detail;  // the flag (`--batch-size`), the default's rationale, the derivation
  std::optional<analysis::ByteRange> range;  // Script / Unknown: where in the file
  std::string blocking_expression;            // Unknown: the expression that could not be folded

  static Source flag(std::string_view name) { return {SourceKind::CommandLine, std::string(name), {}, {}}; }
  static Source by_default(std::string_view why) { return {SourceKind::Default, std::string(why), {}, {}}; }
  static Source derived(std::string_view how) { return {SourceKind::Derived, std::string(how), {}, {}}; }
};

/// A value with its provenance. `stated()` is true when someone (flag or script) gave it.
template <class T>
struct Field {
  T value{};
  Source source{};

  bool stated() const { return source.kind == SourceKind::CommandLine || source.kind == SourceKind::Script; }
  bool defaulted() const { return source.kind == SourceKind::Default || source.kind == SourceKind::Unknown; }
  void set(T v, Source s) {
    value = std::move(v);
    source = std::move(s);
  }
};

/// Precision modes (estimator.md §3.1). Amp follows the card: bf16 where supported.
enum class Precision { Fp32, Amp, AmpFp16, AmpBf16, PureFp16, PureBf16, Fp16Master };
enum class Optimizer { Sgd, SgdMomentum, Adam, AdamW, AdamW8bit, PagedAdamW8bit, Adafactor, Lion, Lion8bit, RmsProp, Adagrad };
/// How a torch optimizer runs its step: foreach (default on CUDA) holds one parameter-sized
/// temporary; fused and the for-loop do not; in-backward steps each parameter as its
/// gradient arrives, so the full gradient set never exists.
enum class OptimizerImpl { Foreach, Fused, ForLoop, InBackward };
enum class Sharding { None, Ddp, Zero1, Zero2, Zero3, FsdpFull, FsdpGradOp, FsdpHybrid, Fsdp2 };
enum class Attention { Eager, Sdpa, Flash };
enum class Quantization { None, Int8, Nf4, Fp8 };
enum class Peft { None, Lora, Qlora };
enum class LossImpl { Full, Chunked };  // chunked / fused cross-entropy (Liger, torchtune, LitGPT)
enum class KvCacheDtype { Model, Fp8 };
/// The task head the script's loading class adds (AutoModelForCausalLM, ...ForMaskedLM,
/// ...ForSequenceClassification, AutoModel). Catalogue default when nobody says.
enum class Head { CatalogDefault, CausalLm, MaskedLm, SequenceClassification, None };

std::string_view precision_name(Precision p);
std::string_view optimizer_name(Optimizer o);
std::string_view optimizer_impl_name(OptimizerImpl o);
std::string_view sharding_name(Sharding s);
std::string_view attention_name(Attention a);
std::string_view quantization_name(Quantization q);
std::string_view peft_name(Peft p);
std::string_view loss_impl_name(LossImpl l);
std::string_view head_name(Head h);

/// Parsers for the CLI spellings (the reference's values plus ours); nullopt when unknown.
std::optional<Precision> parse_precision(std::string_view s);
std::optional<Optimizer> parse_optimizer(std::string_view s);
std::optional<OptimizerImpl> parse_optimizer_impl(std::string_view s);
std::optional<Sharding> parse_sharding(std::string_view s);
std::optional<Attention> parse_attention(std::string_view s);
std::optional<Quantization> parse_quantization(std::string_view s);
std::optional<Peft> parse_peft(std::string_view s);
std::optional<Head> parse_head(std::string_view s);

/// Everything the cost model reads. Optional values are "not given" (resolved against the
/// model: sequence = max position, context = sequence, ...).
struct JobSpec {
  // The model: a catalogue reference, or an explicit parameter count.
  Field<std::string> model{{}, Source::by_default("none")};
  Field<std::optional<int64_t>> params{std::nullopt, Source::by_default("the catalogue's published count")};
  Field<Head> head{Head::CatalogDefault, Source::by_default("the catalogue checkpoint's head")};

  // Shape of one micro-batch.
  Field<int> batch_size{1, Source::by_default("1 (per-device micro-batch)")};
  Field<std::optional<int>> seq_len{std::nullopt,
                                    Source::by_default("not read: 1024 tokens (at most the model's maximum position) "
                                                       "assumed, the maximum position bounds the interval")};
  Field<std::optional<int>> image_size{std::nullopt, Source::by_default("the model's reference resolution")};
  Field<int> accumulation_steps{1, Source::by_default("1")};

  // Numerics.
  Field<Precision> precision{Precision::Fp32, Source::by_default("fp32 (no autocast or cast seen)")};
  Field<Quantization> quantization{Quantization::None, Source::by_default("unquantised weights")};
  Field<bool> double_quant{true, Source::by_default("bitsandbytes nf4 double quantisation on")};
  // Device memory the CUDA runtime and its libraries take before the first tensor. Stated with
  // --cuda-context; otherwise the card's measured context, else an assumed 512 MiB (CUDA 12
  // with lazy module loading; CUDA 11 stacks hold about 1.3 GiB, issue 25).
  Field<std::optional<int64_t>> cuda_context_bytes{std::nullopt, Source::by_default(
      "the card's measured context, else 512 MiB (CUDA 12, lazy loading)")};

  // Training.
  Field<bool> inference_only{false, Source::by_default("training (a backward pass)")};
  Field<Optimizer> optimizer{Optimizer::AdamW, Source::by_default("AdamW")};
  Field<OptimizerImpl> optimizer_impl{OptimizerImpl::Foreach, Source::by_default("torch's CUDA default (foreach)")};
  Field<bool> grads_set_to_none{true, Source::by_default("zero_grad(set_to_none=True), torch >= 2.0")};
  Field<bool> gradient_checkpointing{false, Source::by_default("off")};
  Field<bool> activation_offload{false, Source::by_default("off")};
  Field<Attention> attention{Attention::Sdpa, Source::by_default("SDPA (transformers >= 4.36 default)")};
  Field<LossImpl> loss_impl{LossImpl::Full, Source::by_default("full logits (Hugging Face loss)")};
  Field<double> frozen_fraction{0.0, Source::by_default("all parameters trainable")};
  // torch-preflight's `--trainable-params`: the count with gradients (the adapters' count
  // under PEFT); when given it decides the frozen share instead of frozen_fraction.
  Field<std::optional<int64_t>> trainable_params{std::nullopt, Source::by_default("every parameter (or the adapters)")};
  Field<Peft> peft{Peft::None, Source::by_default("full fine-tune")};
  Field<int> lora_rank{16, Source::by_default("16")};
  Field<std::vector<std::string>> lora_targets{{}, Source::by_default("q and v projections (peft default)")};

  // Parallelism.
  Field<std::optional<int>> world_size{std::nullopt, Source::by_default("the target's device count")};
  Field<Sharding> sharding{Sharding::None, Source::by_default("none")};
  Field<bool> offload_optimizer{false, Source::by_default("off")};
  Field<bool> offload_params{false, Source::by_default("off")};
  Field<int> tensor_parallel{1, Source::by_default("1")};
  Field<bool> sequence_parallel{false, Source::by_default("off")};
  Field<int> pipeline_parallel{1, Source::by_default("1")};
  Field<bool> ddp_bucket_view{false, Source::by_default("gradient_as_bucket_view=False (DDP default)")};

  // Generation / serving.
  Field<bool> generation{false, Source::by_default("no generation")};
  Field<std::optional<int>> max_context{std::nullopt, Source::by_default("the sequence length")};
  Field<std::optional<int>> prompt_len{std::nullopt, Source::by_default("the whole context as prompt")};
  Field<int> beams{1, Source::by_default("1 (greedy / sampling)")};
  Field<KvCacheDtype> kv_cache_dtype{KvCacheDtype::Model, Source::by_default("the activation dtype")};
  Field<bool> full_prompt_logits{false, Source::by_default("last-token logits in prefill (transformers >= 4.45)")};
};

/// The largest parameter count `--params` / `--trainable-params` take (a quadrillion).
inline constexpr int64_t kMaxCount = 1'000'000'000'000'000;

/// The parameter-count spellings of `--params`: 7B, 124m, 6.7e9, 6,738,415,616, 1_000k.
/// nullopt unless the count is from 1 to kMaxCount (NaN, infinities, negatives, "0.4").
std::optional<int64_t> parse_count(std::string_view text);

}  // namespace preflight::estimator
