// Parameter layouts per architecture family. Each builder follows the Hugging Face module
// tree of that family (transformers' modeling_<family>.py) matrix by matrix; biases and
// norm weights are counted where the module has them. Sources: the public configs in
// architectures.json; the totals are checked against the published counts in a test.
#include "estimator/layout.h"

#include <algorithm>
#include <array>

namespace preflight::estimator {
namespace {

bool starts_with_any(std::string_view id, std::initializer_list<std::string_view> prefixes) {
  return std::any_of(prefixes.begin(), prefixes.end(), [&](std::string_view p) { return id.starts_with(p); });
}

// GPT-2 / GPTBigCode: fused c_attn (MQA shrinks its K/V part), Conv1D with biases,
// LayerNorm with bias, learned positions, tied head.
ModelLayout gpt2_layout(const Shape& s) {
  ModelLayout m;
  const int64_t h = s.hidden, kv_width = int64_t(s.kv_heads_or_heads()) * s.head_dim_or_derived();
  m.encoder_layers = s.layers;
  m.linears = {{"c_attn", "qkv", h, h + 2 * kv_width, true},
               {"c_proj", "o", h, h, true},
               {"c_fc", "fc1", h, s.intermediate, true},
               {"c_proj", "fc2", s.intermediate, h, true}};
  m.block_other_params = 4 * h;  // ln_1, ln_2 (weight + bias)
  m.embedding_params = int64_t(s.vocab) * h + int64_t(s.max_position) * h;
  m.other_params = 2 * h;  // ln_f
  m.tied_head_params = int64_t(s.vocab) * h;
  m.default_lora_targets = {"c_attn"};
  return m;
}

// The BERT-style block (also ViT's): separate q/k/v/o with biases and a two-matrix MLP,
// under the module names transformers uses for both.
std::vector<BlockLinear> bert_style_linears(int64_t h, int64_t intermediate) {
  return {{"query", "q", h, h, true},  {"key", "k", h, h, true},  {"value", "v", h, h, true},
          {"dense", "o", h, h, true},  {"dense", "fc1", h, intermediate, true},
          {"dense", "fc2", intermediate, h, true}};
}

// BERT / RoBERTa / DistilBERT: separate q/k/v/o with biases, post-LayerNorm, word +
// position (+ token type) tables with an embedding LayerNorm; BERT/RoBERTa add a pooler.
ModelLayout bert_layout(const Architecture& a, const Shape& s) {
  ModelLayout m;
  const int64_t h = s.hidden;
  const bool distil = a.id.starts_with("distilbert");
  m.encoder_layers = s.layers;
  if (distil) {
    m.linears = {{"q_lin", "q", h, h, true},  {"k_lin", "k", h, h, true},   {"v_lin", "v", h, h, true},
                 {"out_lin", "o", h, h, true}, {"lin1", "fc1", h, s.intermediate, true},
                 {"lin2", "fc2", s.intermediate, h, true}};
    m.default_lora_targets = {"q_lin", "v_lin"};
  } else {
    m.linears = bert_style_linears(h, s.intermediate);
    m.default_lora_targets = {"query", "value"};
  }
  m.block_other_params = 4 * h;  // two LayerNorms
  const int64_t type_vocab = distil ? 0 : (a.id.starts_with("roberta") ? 1 : 2);
  m.embedding_params = (int64_t(s.vocab) + s.max_position + type_vocab) * h;
  m.other_params = 2 * h + (distil ? 0 : h * h + h);  // embedding LayerNorm, pooler
  m.other_matmul_params = distil ? 0 : h * h;
  return m;
}

// Llama family (Llama, Mistral, Qwen2, TinyLlama, Gemma, Phi-3, Mixtral): q/k/v/o with the
// stored head_dim and GQA, optional q/k/v bias (Qwen2), gated MLP (or MoE experts plus a
// router), RMSNorm weights only; Gemma-2 adds two more norms per block.
ModelLayout llama_layout(const Architecture& a, const Shape& s) {
  ModelLayout m;
  const int64_t h = s.hidden, q_width = int64_t(s.heads) * s.head_dim_or_derived();
  const int64_t kv_width = int64_t(s.kv_heads_or_heads()) * s.head_dim_or_derived();
  const bool bias = s.attn_bias;
  const int experts = s.num_experts > 0 ? s.num_experts : 1;
  const int64_t inter = s.num_experts > 0 && s.moe_intermediate > 0 ? s.moe_intermediate : s.intermediate;
  m.encoder_layers = s.layers;
  m.linears = {{"q_proj", "q", h, q_width, bias},       {"k_proj", "k", h, kv_width, bias},
               {"v_proj", "v", h, kv_width, bias},       {"o_proj", "o", q_width, h, false},
               {"gate_proj", "gate", h, inter, false, experts}, {"up_proj", "up", h, inter, false, experts},
               {"down_proj", "down", inter, h, false, experts}};
  if (s.num_experts > 0) m.linears.push_back({"gate", "router", h, s.num_experts, false});
  const int norms = a.id.starts_with("gemma-2") ? 4 : 2;
  m.block_other_params = norms * h;
  m.embedding_params = int64_t(s.vocab) * h;
  m.head_params = s.tied_embeddings ? 0 : int64_t(s.vocab) * h;
  m.tied_head_params = s.tied_embeddings ? int64_t(s.vocab) * h : 0;
  m.other_params = h;  // final norm
  m.default_lora_targets = {"q_proj", "v_proj"};
  return m;
}

// Phi-2 and GPT-J: parallel attention and MLP after one LayerNorm, untied head with bias.
ModelLayout parallel_layout(const Architecture& a, const Shape& s) {
  ModelLayout m;
  const int64_t h = s.hidden;
  const bool phi = a.id.starts_with("phi-2");
  m.encoder_layers = s.layers;
  m.linears = {{"q_proj", "q", h, h, phi},   {"k_proj", "k", h, h, phi},
               {"v_proj", "v", h, h, phi},   {phi ? "dense" : "out_proj", "o", h, h, phi},
               {phi ? "fc1" : "fc_in", "fc1", h, s.intermediate, true},
               {phi ? "fc2" : "fc_out", "fc2", s.intermediate, h, true}};
  m.block_other_params = 2 * h;  // one LayerNorm
  m.embedding_params = int64_t(s.vocab) * h;
  m.head_params = int64_t(s.vocab) * h + s.vocab;
  m.other_params = 2 * h;
  m.default_lora_targets = {"q_proj", "v_proj"};
  return m;
}

// ViT for image classification: conv patch embedding, [CLS] token, learned positions,
// pre-LayerNorm blocks, final LayerNorm, linear classifier (no pooler).
ModelLayout vit_layout(const Shape& s) {
  ModelLayout m;
  const int64_t h = s.hidden, patch = s.patch_size > 0 ? s.patch_size : 16;
  m.encoder_layers = s.layers;
  m.linears = bert_style_linears(h, s.intermediate);
  m.block_other_params = 4 * h;
  const int64_t patch_embed = 3 * patch * patch * h + h;
  m.embedding_params = int64_t(s.max_position) * h + h;  // positions + [CLS]
  m.other_params = patch_embed + 2 * h;
  m.other_matmul_params = 3 * patch * patch * h;
  m.head_params = h * s.num_classes + s.num_classes;
  m.default_lora_targets = {"query", "value"};
  return m;
}

// Whisper: conv front-end, frozen sinusoidal encoder positions (counted), pre-LayerNorm
// encoder and decoder blocks, k_proj without bias, decoder cross-attention, tied head.
ModelLayout whisper_layout(const Shape& s) {
  ModelLayout m;
  const int64_t h = s.hidden, mel = s.num_mel_bins > 0 ? s.num_mel_bins : 80;
  m.encoder_layers = s.layers;
  m.decoder_layers = s.decoder_layers;
  auto attention = [&](bool decoder, bool cross) {
    m.linears.push_back({"q_proj", "q", h, h, true, 1, decoder, cross});
    m.linears.push_back({"k_proj", "k", h, h, false, 1, decoder, cross});
    m.linears.push_back({"v_proj", "v", h, h, true, 1, decoder, cross});
    m.linears.push_back({"out_proj", "o", h, h, true, 1, decoder, cross});
  };
  auto mlp = [&](bool decoder) {
    m.linears.push_back({"fc1", "fc1", h, s.intermediate, true, 1, decoder});
    m.linears.push_back({"fc2", "fc2", s.intermediate, h, true, 1, decoder});
  };
  attention(false, false);
  mlp(false);
  attention(true, false);
  attention(true, true);
  mlp(true);
  m.block_other_params = 4 * h;
  m.decoder_block_other_params = 6 * h;
  const int64_t encoder_positions = int64_t(s.encoder_seq_len > 0 ? s.encoder_seq_len : 1500) * h;
  m.embedding_params = int64_t(s.vocab) * h + int64_t(s.max_position) * h + encoder_positions;
  const int64_t conv = (mel * h * 3 + h) + (h * h * 3 + h);
  m.other_params = conv + 4 * h;  // encoder and decoder final LayerNorms
  m.other_matmul_params = mel * h * 3 + h * h * 3;
  m.tied_head_params = int64_t(s.vocab) * h;
  m.default_lora_targets = {"q_proj", "v_proj"};
  return m;
}

// T5 (v1): no biases, RMS-style LayerNorm weights, relative-position bias tables in the
// first block of each stack, ReLU MLP, shared tied embedding.
ModelLayout t5_layout(const Shape& s) {
  ModelLayout m;
  const int64_t h = s.hidden, inner = int64_t(s.heads) * s.head_dim_or_derived();
  m.encoder_layers = s.layers;
  m.decoder_layers = s.decoder_layers;
  auto attention = [&](bool decoder, bool cross) {
    m.linears.push_back({"q", "q", h, inner, false, 1, decoder, cross});
    m.linears.push_back({"k", "k", h, inner, false, 1, decoder, cross});
    m.linears.push_back({"v", "v", h, inner, false, 1, decoder, cross});
    m.linears.push_back({"o", "o", inner, h, false, 1, decoder, cross});
  };
  attention(false, false);
  m.linears.push_back({"wi", "fc1", h, s.intermediate, false});
  m.linears.push_back({"wo", "fc2", s.intermediate, h, false});
  attention(true, false);
  attention(true, true);
  m.linears.push_back({"wi", "fc1", h, s.intermediate, false, 1, true});
  m.linears.push_back({"wo", "fc2", s.intermediate, h, false, 1, true});
  m.block_other_params = 2 * h;
  m.decoder_block_other_params = 3 * h;
  const int64_t buckets = s.relative_attention_buckets > 0 ? s.relative_attention_buckets : 32;
  m.embedding_params = int64_t(s.vocab) * h;
  m.other_params = 2 * buckets * s.heads + 2 * h;  // two relative tables, two final norms
  m.tied_head_params = int64_t(s.vocab) * h;
  m.default_lora_targets = {"q", "v"};
  return m;
}

}  // namespace

int64_t ModelLayout::encoder_block_params() const {
  int64_t total = block_other_params;
  for (const BlockLinear& l : linears)
    if (!l.decoder) total += l.params();
  return total;
}

int64_t ModelLayout::decoder_block_params() const {
  int64_t total = decoder_block_other_params;
  for (const BlockLinear& l : linears)
    if (l.decoder) total += l.params();
  return total;
}

int64_t ModelLayout::total_params() const {
  return encoder_block_params() * encoder_layers + decoder_block_params() * decoder_layers + embedding_params +
         head_params + other_params;
}

int64_t ModelLayout::quantizable_params() const {
  int64_t total = 0;
  for (const BlockLinear& l : linears) total += l.weight_params() * (l.decoder ? decoder_layers : encoder_layers);
  return total;
}

int64_t ModelLayout::matmul_weight_params() const {
  return quantizable_params() + head_params + tied_head_params + other_matmul_params;
}

int64_t ModelLayout::largest_block_params() const {
  return std::max(encoder_block_params(), decoder_layers > 0 ? decoder_block_params() : 0);
}

int64_t ModelLayout::largest_matrix_params() const {
  int64_t largest = 0;
  for (const BlockLinear& l : linears) largest = std::max(largest, l.in * l.out);
  return largest;
}

std::optional<ModelLayout> transformer_layout(const Architecture& a) {
  if (!a.shape || a.shape->hidden <= 0 || a.shape->heads <= 0 || a.shape->layers <= 0) return std::nullopt;
  const Shape& s = *a.shape;
  const std::string_view id = a.id;
  if (starts_with_any(id, {"gpt2", "distilgpt2", "starcoder"})) return gpt2_layout(s);
  if (starts_with_any(id, {"bert", "roberta", "distilbert"})) return bert_layout(a, s);
  if (starts_with_any(id, {"llama", "mistral", "qwen", "tinyllama", "gemma", "phi-3", "mixtral"}))
    return llama_layout(a, s);
  if (starts_with_any(id, {"phi-2", "gpt-j"})) return parallel_layout(a, s);
  if (id.starts_with("vit")) return vit_layout(s);
  if (id.starts_with("whisper")) return whisper_layout(s);
  if (id.starts_with("t5")) return t5_layout(s);
  return std::nullopt;
}

LoraPlan lora_plan(const ModelLayout& layout, int rank, const std::vector<std::string>& targets) {
  std::vector<std::string> wanted = targets;
  if (wanted.empty())
    for (std::string_view t : layout.default_lora_targets) wanted.emplace_back(t);
  const bool all = std::find(wanted.begin(), wanted.end(), "all-linear") != wanted.end();
  // Modules that read the same tensor: q/k/v (the attention input), gate/up/fc1 (the MLP input).
  auto input_group = [](std::string_view role) -> std::string_view {
    if (role == "q" || role == "k" || role == "v" || role == "qkv") return "attention-in";
    if (role == "gate" || role == "up" || role == "fc1") return "mlp-in";
    return role;
  };
  std::vector<std::string> groups_seen;
  LoraPlan plan;
  for (const BlockLinear& l : layout.linears) {
    if (l.role == "router") continue;
    const bool match = all || std::any_of(wanted.begin(), wanted.end(), [&](const std::string& t) {
                         return t == l.role || std::string_view(l.name).ends_with(t);
                       });
    if (!match) continue;
    const int layers = l.decoder ? layout.decoder_layers : layout.encoder_layers;
    plan.trainable += int64_t(rank) * (l.in + l.out) * l.copies * layers;
    plan.adapted_input_width += l.in * l.copies;
    std::string group = std::string(input_group(l.role)) + (l.decoder ? "/decoder" : "") + (l.cross ? "/cross" : "");
    if (std::find(groups_seen.begin(), groups_seen.end(), group) == groups_seen.end()) {
      groups_seen.push_back(group);
      plan.adapted_distinct_input_width += l.in * l.copies;
    }
    std::string name(l.name);
    if (std::find(plan.modules.begin(), plan.modules.end(), name) == plan.modules.end()) plan.modules.push_back(name);
  }
  return plan;
}

}  // namespace preflight::estimator
