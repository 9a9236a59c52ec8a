// The built-in catalogue: model architectures, GPUs and cloud instances, parsed from the
// JSON data in estimator/data/ (embedded in the binary). Pure: text in, tables out.
//
// Names are normalised once, by `normalize_name`, both when the tables are built and when a
// query is looked up, so `Standard_NC24ads_A100_v4`, `standard-nc24ads-a100-v4` and
// `standard_nc24ads_a100_v4` are the same key (the reference tool normalised only queries
// and so never resolved an Azure size; estimator.md §6.1).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace preflight::estimator {

/// Trim, lower-case, drop spaces, and treat `_` as `-`: the one normalisation used for every
/// catalogue key and every query.
std::string normalize_name(std::string_view name);

enum class Family { DecoderOnly, EncoderOnly, EncoderDecoder, VisionTransformer, Cnn, Other };
std::string_view family_name(Family f);

/// Architecture dimensions as the public config states them (architectures.json `shape`).
struct Shape {
  int layers = 0;
  int decoder_layers = 0;  // encoder-decoder only
  int hidden = 0;
  int heads = 0;
  int kv_heads = 0;
  int head_dim = 0;  // the stored value (Gemma, Mistral-Nemo: not hidden / heads)
  int intermediate = 0;
  int vocab = 0;
  int max_position = 0;
  int encoder_seq_len = 0;  // Whisper: 1500 mel frames / 2
  int num_experts = 0;
  int experts_per_token = 0;
  int moe_intermediate = 0;
  int patch_size = 0;
  int image_size = 0;
  int num_classes = 0;
  int num_mel_bins = 0;
  int sliding_window = 0;
  int relative_attention_buckets = 0;
  int rotary_dim = 0;
  double partial_rotary_factor = 1.0;
  double dropout = 0.0;
  bool tied_embeddings = false;
  bool gated_mlp = false;
  bool learned_positions = false;
  bool uses_dropout = false;
  bool attn_bias = false;
  bool parallel_attention = false;
  bool has_lm_head = false;
  std::string norm;            // "layernorm" | "rmsnorm" | "rmsnorm (T5 ...)"
  std::string mlp_activation;  // gelu | gelu_new | silu | gelu_tanh | relu
  std::string default_head;
  std::string activation_family;  // t5 | whisper (encoder-decoder coefficients)

  bool rms_norm() const { return norm.starts_with("rmsnorm"); }
  int kv_heads_or_heads() const { return kv_heads > 0 ? kv_heads : heads; }
  int head_dim_or_derived() const { return head_dim > 0 ? head_dim : hidden / heads; }
};

/// A CNN's activations measured on the meta device (2-byte reference dtype, per sample, at
/// `reference_image_size`).
struct CnnProfile {
  int64_t activation_bytes_per_sample = 0;
  int reference_image_size = 224;
  int64_t raw_fp32_retained_bytes_batch1 = 0;
  int num_classes = 1000;
};

struct Architecture {
  std::string id;
  std::vector<std::string> aliases;
  Family family = Family::Other;
  std::string family_text;  // as stored
  std::string kind;         // the reference tool's coarse kind
  int64_t params = 0;       // published count
  std::optional<int64_t> params_trainable;  // where a frozen table exists (Whisper)
  std::optional<int64_t> anchor_params;     // where the reference stores another count
  std::optional<int64_t> params_formula_exact;
  std::optional<Shape> shape;
  std::optional<CnnProfile> cnn;
  std::string params_source;
  std::string note;
};

struct GpuAnchor {
  int64_t total_mib = 0;
  double reserve_fraction = 0.0;
  int64_t display_reserve_mib = 0;
  int64_t usable_bytes = 0;
  std::optional<int64_t> measured_context_mib;
};

struct Gpu {
  std::string id;
  std::vector<std::string> aliases;
  std::string display_name;
  std::string vendor;
  std::string segment;  // datacenter | workstation | consumer
  std::string memory_type;
  int64_t memory_bytes_nominal = 0;
  std::optional<int64_t> memory_bytes_reported;
  std::optional<int64_t> memory_bytes_runtime_visible;
  int64_t usable_bytes = 0;  // per visible device, before the CUDA context
  std::string usable_basis;
  int64_t display_reserve_bytes = 0;
  bool bf16 = false;
  bool fp8 = false;
  int devices_per_board = 1;  // MI250/MI250X: two devices per board
  std::optional<GpuAnchor> anchor;
  std::string note;
};

struct Instance {
  std::string id;
  std::string provider;
  std::string gpu;  // a Gpu id
  int gpu_count = 0;
  bool confirmed = false;
  std::string source;
};

/// The three tables plus normalised-name indexes. Lookups return nullptr when absent.
class Catalog {
 public:
  const std::vector<Architecture>& architectures() const { return architectures_; }
  const std::vector<Gpu>& gpus() const { return gpus_; }
  const std::vector<Instance>& instances() const { return instances_; }

  /// estimator.md §5.2: the full reference, then the part after the last `/`, each also with
  /// one trailing `-hf`, `-v0.1`, `-instruct` or `-chat` removed; ids and aliases alike.
  const Architecture* find_architecture(std::string_view reference) const;
  /// The `n` architecture ids nearest to `reference` by edit distance (over ids and aliases,
  /// against the whole reference and the part after its last `/`), nearest first: the
  /// "did you mean" list for a name the catalogue does not hold.
  std::vector<std::string> closest_architectures(std::string_view reference, std::size_t n = 5) const;
  const Gpu* find_gpu(std::string_view name) const;  // id or alias
  const Gpu* gpu_by_id(std::string_view id) const;
  const Instance* find_instance(std::string_view name) const;

  /// Parses the three JSON documents. On malformed input returns std::nullopt and sets
  /// `error` to what was wrong; never throws.
  static std::optional<Catalog> parse(std::string_view architectures_json, std::string_view gpus_json,
                                      std::string_view instances_json, std::string& error);

 private:
  std::vector<Architecture> architectures_;
  std::vector<Gpu> gpus_;
  std::vector<Instance> instances_;
  std::map<std::string, std::size_t, std::less<>> architecture_index_;
  std::map<std::string, std::size_t, std::less<>> gpu_index_;
  std::map<std::string, std::size_t, std::less<>> instance_index_;
};

/// The catalogue compiled into the binary, parsed on first use (an immutable table; the
/// embedded data is validated by the test suite, so a parse failure here is a build defect
/// and yields an empty catalogue).
const Catalog& builtin_catalog();

}  // namespace preflight::estimator
