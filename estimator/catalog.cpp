#include "estimator/catalog.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <limits>
#include <nlohmann/json.hpp>

#include "estimator/embedded_data.h"

namespace preflight::estimator {
namespace {

using nlohmann::json;

// Type-checked readers: the core never throws, so a field of the wrong type reads as absent.
std::optional<int64_t> read_int(const json& o, const char* key) {
  auto it = o.find(key);
  if (it == o.end() || !it->is_number()) return std::nullopt;
  return it->is_number_float() ? static_cast<int64_t>(it->get<double>()) : it->get<int64_t>();
}
int read_int_or(const json& o, const char* key, int fallback) {
  return static_cast<int>(read_int(o, key).value_or(fallback));
}
double read_double_or(const json& o, const char* key, double fallback) {
  auto it = o.find(key);
  return it != o.end() && it->is_number() ? it->get<double>() : fallback;
}
bool read_bool_or(const json& o, const char* key, bool fallback) {
  auto it = o.find(key);
  return it != o.end() && it->is_boolean() ? it->get<bool>() : fallback;
}
std::string read_string(const json& o, const char* key) {
  auto it = o.find(key);
  return it != o.end() && it->is_string() ? it->get<std::string>() : std::string();
}
std::vector<std::string> read_strings(const json& o, const char* key) {
  std::vector<std::string> out;
  auto it = o.find(key);
  if (it == o.end() || !it->is_array()) return out;
  for (const json& v : *it)
    if (v.is_string()) out.push_back(v.get<std::string>());
  return out;
}

Family parse_family(std::string_view text) {
  if (text == "decoder-only") return Family::DecoderOnly;
  if (text == "encoder-only") return Family::EncoderOnly;
  if (text == "encoder-decoder") return Family::EncoderDecoder;
  if (text == "vision-transformer") return Family::VisionTransformer;
  if (text == "cnn") return Family::Cnn;
  return Family::Other;
}

Shape parse_shape(const json& s) {
  Shape out;
  out.layers = read_int_or(s, "layers", 0);
  out.decoder_layers = read_int_or(s, "decoder_layers", 0);
  out.hidden = read_int_or(s, "hidden", 0);
  out.heads = read_int_or(s, "heads", 0);
  out.kv_heads = read_int_or(s, "kv_heads", out.heads);
  out.head_dim = read_int_or(s, "head_dim", 0);
  out.intermediate = read_int_or(s, "intermediate", 0);
  out.vocab = read_int_or(s, "vocab", 0);
  out.max_position = read_int_or(s, "max_position", 0);
  out.encoder_seq_len = read_int_or(s, "encoder_seq_len", 0);
  out.num_experts = read_int_or(s, "num_experts", 0);
  out.experts_per_token = read_int_or(s, "experts_per_token", 0);
  out.moe_intermediate = read_int_or(s, "moe_intermediate", 0);
  out.patch_size = read_int_or(s, "patch_size", 0);
  out.image_size = read_int_or(s, "image_size", 0);
  out.num_classes = read_int_or(s, "num_classes", 0);
  out.num_mel_bins = read_int_or(s, "num_mel_bins", 0);
  out.sliding_window = read_int_or(s, "sliding_window", 0);
  out.relative_attention_buckets = read_int_or(s, "relative_attention_buckets", 0);
  out.rotary_dim = read_int_or(s, "rotary_dim", 0);
  out.partial_rotary_factor = read_double_or(s, "partial_rotary_factor", 1.0);
  out.dropout = read_double_or(s, "dropout", 0.0);
  out.tied_embeddings = read_bool_or(s, "tied_embeddings", false);
  out.gated_mlp = read_bool_or(s, "gated_mlp", false);
  out.learned_positions = read_bool_or(s, "learned_positions", false);
  out.uses_dropout = read_bool_or(s, "uses_dropout", false);
  out.attn_bias = read_bool_or(s, "attn_bias", false);
  out.parallel_attention = read_bool_or(s, "parallel_attention", false);
  out.has_lm_head = read_bool_or(s, "has_lm_head", false);
  out.norm = read_string(s, "norm");
  out.mlp_activation = read_string(s, "mlp_activation");
  out.default_head = read_string(s, "default_head");
  out.activation_family = read_string(s, "activation_family");
  return out;
}

Architecture parse_architecture(const std::string& key, const json& m) {
  Architecture a;
  a.id = m.contains("id") ? read_string(m, "id") : key;
  a.aliases = read_strings(m, "aliases");
  a.family_text = read_string(m, "family");
  a.family = parse_family(a.family_text);
  a.kind = read_string(m, "kind");
  a.params = read_int(m, "params").value_or(0);
  a.params_trainable = read_int(m, "params_trainable");
  a.anchor_params = read_int(m, "anchor_params");
  a.params_formula_exact = read_int(m, "params_formula_exact");
  a.params_source = read_string(m, "params_source");
  a.note = read_string(m, "note");
  if (auto it = m.find("shape"); it != m.end() && it->is_object()) a.shape = parse_shape(*it);
  if (auto it = m.find("cnn"); it != m.end() && it->is_object()) {
    CnnProfile c;
    c.activation_bytes_per_sample = read_int(*it, "activation_bytes_per_sample").value_or(0);
    c.reference_image_size = read_int_or(*it, "reference_image_size", 224);
    c.raw_fp32_retained_bytes_batch1 = read_int(*it, "raw_fp32_retained_bytes_batch1").value_or(0);
    c.num_classes = read_int_or(*it, "num_classes", 1000);
    a.cnn = c;
  }
  return a;
}

Gpu parse_gpu(const json& g) {
  Gpu out;
  out.id = read_string(g, "id");
  out.aliases = read_strings(g, "aliases");
  out.display_name = read_string(g, "display_name");
  out.vendor = read_string(g, "vendor");
  out.segment = read_string(g, "segment");
  out.memory_type = read_string(g, "memory_type");
  out.memory_bytes_nominal = read_int(g, "memory_bytes_nominal").value_or(0);
  out.memory_bytes_reported = read_int(g, "memory_bytes_reported");
  out.memory_bytes_runtime_visible = read_int(g, "memory_bytes_runtime_visible");
  out.usable_bytes = read_int(g, "usable_bytes").value_or(0);
  out.usable_basis = read_string(g, "usable_basis");
  out.display_reserve_bytes = read_int(g, "display_reserve_bytes").value_or(0);
  out.bf16 = read_bool_or(g, "bf16", false);
  out.fp8 = read_bool_or(g, "fp8", false);
  out.devices_per_board = read_int_or(g, "devices_per_board", 1);
  out.note = read_string(g, "note");
  if (auto it = g.find("anchor"); it != g.end() && it->is_object()) {
    GpuAnchor a;
    a.total_mib = read_int(*it, "total_mib").value_or(0);
    a.reserve_fraction = read_double_or(*it, "reserve_fraction", 0.0);
    a.display_reserve_mib = read_int(*it, "display_reserve_mib").value_or(0);
    a.usable_bytes = read_int(*it, "usable_bytes").value_or(0);
    a.measured_context_mib = read_int(*it, "measured_context_mib");
    out.anchor = a;
  }
  return out;
}

Instance parse_instance(const json& i) {
  Instance out;
  out.id = read_string(i, "id");
  out.provider = read_string(i, "provider");
  out.gpu = read_string(i, "gpu");
  out.gpu_count = read_int_or(i, "gpu_count", 0);
  out.confirmed = read_bool_or(i, "confirmed", false);
  out.source = read_string(i, "source");
  return out;
}

// Later keys never replace earlier ones: ids are inserted before aliases, so an alias can
// never shadow another entry's id.
void index_name(std::map<std::string, std::size_t, std::less<>>& index, std::string_view name,
                std::size_t position) {
  std::string key = normalize_name(name);
  if (!key.empty()) index.emplace(std::move(key), position);
}

std::optional<json> parse_object(std::string_view text, const char* what, std::string& error) {
  json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) {
    error = std::string(what) + " is not a JSON object";
    return std::nullopt;
  }
  return doc;
}

std::string without_hyphens(std::string_view name) {
  std::string out;
  for (char ch : name)
    if (ch != '-') out += ch;
  return out;
}

const std::size_t* lookup(const std::map<std::string, std::size_t, std::less<>>& index,
                          std::string_view key) {
  auto it = index.find(key);
  return it == index.end() ? nullptr : &it->second;
}

// Candidate keys of §5.2, in order.
std::vector<std::string> reference_candidates(std::string_view reference) {
  std::string full = normalize_name(reference);
  std::vector<std::string> bases = {full};
  if (std::size_t slash = full.rfind('/'); slash != std::string::npos) bases.push_back(full.substr(slash + 1));
  static constexpr std::array<std::string_view, 4> kSuffixes = {"-hf", "-v0.1", "-instruct", "-chat"};
  std::vector<std::string> out;
  for (const std::string& base : bases) {
    out.push_back(base);
    for (std::string_view suffix : kSuffixes)
      if (base.size() > suffix.size() && base.ends_with(suffix))
        out.push_back(base.substr(0, base.size() - suffix.size()));
  }
  return out;
}

// Levenshtein distance (insertions, deletions, substitutions each cost 1), one row of memory.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

std::string normalize_name(std::string_view name) {
  std::size_t begin = 0, end = name.size();
  while (begin < end && std::isspace(static_cast<unsigned char>(name[begin]))) ++begin;
  while (end > begin && std::isspace(static_cast<unsigned char>(name[end - 1]))) --end;
  std::string out;
  for (char c : name.substr(begin, end - begin)) {
    if (c == ' ' || c == '\t') continue;
    out += c == '_' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

std::string_view family_name(Family f) {
  switch (f) {
    case Family::DecoderOnly: return "decoder-only";
    case Family::EncoderOnly: return "encoder-only";
    case Family::EncoderDecoder: return "encoder-decoder";
    case Family::VisionTransformer: return "vision-transformer";
    case Family::Cnn: return "cnn";
    case Family::Other: break;
  }
  return "other";
}

std::optional<Catalog> Catalog::parse(std::string_view architectures_json, std::string_view gpus_json,
                                      std::string_view instances_json, std::string& error) {
  auto arch = parse_object(architectures_json, "architectures.json", error);
  auto gpus = parse_object(gpus_json, "gpus.json", error);
  auto instances = parse_object(instances_json, "instances.json", error);
  if (!arch || !gpus || !instances) return std::nullopt;
  auto models = arch->find("models");
  auto gpu_list = gpus->find("gpus");
  auto instance_list = instances->find("instances");
  if (models == arch->end() || !models->is_object() || gpu_list == gpus->end() || !gpu_list->is_array() ||
      instance_list == instances->end() || !instance_list->is_array()) {
    error = "a data file lacks its models / gpus / instances table";
    return std::nullopt;
  }
  Catalog c;
  for (auto it = models->begin(); it != models->end(); ++it)
    if (it.value().is_object()) c.architectures_.push_back(parse_architecture(it.key(), it.value()));
  for (const json& g : *gpu_list)
    if (g.is_object()) c.gpus_.push_back(parse_gpu(g));
  for (const json& i : *instance_list)
    if (i.is_object()) c.instances_.push_back(parse_instance(i));

  for (std::size_t i = 0; i < c.architectures_.size(); ++i) index_name(c.architecture_index_, c.architectures_[i].id, i);
  for (std::size_t i = 0; i < c.architectures_.size(); ++i)
    for (const std::string& alias : c.architectures_[i].aliases) index_name(c.architecture_index_, alias, i);
  for (std::size_t i = 0; i < c.gpus_.size(); ++i) index_name(c.gpu_index_, c.gpus_[i].id, i);
  for (std::size_t i = 0; i < c.gpus_.size(); ++i)
    for (const std::string& alias : c.gpus_[i].aliases) index_name(c.gpu_index_, alias, i);
  // Normalisation removes spaces, so "Tesla T4" and "A100 80GB" arrive without the hyphen
  // their stored names have: the hyphen-free spelling of every id and alias is a key too,
  // inserted last so it never shadows a real one.
  for (std::size_t i = 0; i < c.gpus_.size(); ++i) {
    index_name(c.gpu_index_, without_hyphens(c.gpus_[i].id), i);
    for (const std::string& alias : c.gpus_[i].aliases) index_name(c.gpu_index_, without_hyphens(alias), i);
  }
  for (std::size_t i = 0; i < c.instances_.size(); ++i) index_name(c.instance_index_, c.instances_[i].id, i);
  return c;
}

const Architecture* Catalog::find_architecture(std::string_view reference) const {
  for (const std::string& key : reference_candidates(reference))
    if (const std::size_t* i = lookup(architecture_index_, key)) return &architectures_[*i];
  return nullptr;
}

std::vector<std::string> Catalog::closest_architectures(std::string_view reference, std::size_t n) const {
  const std::vector<std::string> queries = reference_candidates(reference);
  std::vector<std::pair<std::size_t, const Architecture*>> ranked;
  for (const Architecture& a : architectures_) {
    std::size_t best = std::numeric_limits<std::size_t>::max();
    auto consider = [&](std::string_view name) {
      const std::string key = normalize_name(name);
      for (const std::string& q : queries) best = std::min(best, edit_distance(q, key));
    };
    consider(a.id);
    for (const std::string& alias : a.aliases) consider(alias);
    ranked.emplace_back(best, &a);
  }
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<std::string> out;
  for (std::size_t i = 0; i < ranked.size() && out.size() < n; ++i) out.push_back(ranked[i].second->id);
  return out;
}

const Gpu* Catalog::find_gpu(std::string_view name) const {
  const std::size_t* i = lookup(gpu_index_, normalize_name(name));
  return i ? &gpus_[*i] : nullptr;
}

const Gpu* Catalog::gpu_by_id(std::string_view id) const { return find_gpu(id); }

const Instance* Catalog::find_instance(std::string_view name) const {
  const std::size_t* i = lookup(instance_index_, normalize_name(name));
  return i ? &instances_[*i] : nullptr;
}

const Catalog& builtin_catalog() {
  static const Catalog kCatalog = [] {
    std::string error;
    auto parsed = Catalog::parse(embedded::architectures_json(), embedded::gpus_json(),
                                 embedded::instances_json(), error);
    return parsed ? std::move(*parsed) : Catalog{};
  }();
  return kCatalog;
}

}  // namespace preflight::estimator
