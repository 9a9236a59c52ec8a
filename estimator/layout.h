// The parameter layout of a built-in architecture: every matrix of a block (with its Hugging
// Face module name, so LoRA targets and quantisation can pick them), the tables outside the
// blocks, and the total. The total is computed here from the shape, layer by layer, and a
// test pins it to the published count of every catalogue entry (within 1 %), which is what
// makes the per-module figures trustworthy for LoRA, quantisation, the autocast cache and
// the FSDP unit size.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "estimator/catalog.h"

namespace preflight::estimator {

/// One linear (or 1x1-equivalent) matrix of a transformer block.
struct BlockLinear {
  std::string_view name;  // HF leaf module name: q_proj, c_attn, query, fc1, ...
  std::string_view role;  // q k v o qkv gate up down fc1 fc2 gate_up (canonical)
  int64_t in = 0;
  int64_t out = 0;
  bool bias = false;
  int copies = 1;        // MoE experts hold `copies` of the same matrix
  bool decoder = false;  // encoder-decoder: belongs to the decoder stack
  bool cross = false;    // cross-attention (decoder only)

  int64_t weight_params() const { return in * out * copies; }
  int64_t params() const { return (in * out + (bias ? out : 0)) * copies; }
};

struct ModelLayout {
  int encoder_layers = 0;  // blocks of the main (or encoder) stack
  int decoder_layers = 0;  // encoder-decoder only
  std::vector<BlockLinear> linears;  // per block (decoder entries flagged)
  int64_t block_other_params = 0;    // norms, relative-position tables: per encoder block
  int64_t decoder_block_other_params = 0;
  int64_t embedding_params = 0;   // token, position, type tables (and the tied head)
  int64_t head_params = 0;        // an untied LM head / classifier
  int64_t other_params = 0;       // final norms, patch / conv front-ends, pooler
  int64_t other_matmul_params = 0;  // of `other`: matrices used in matmuls (pooler, conv front-end)
  int64_t tied_head_params = 0;   // a tied LM head multiplies by the token table (V x h)
  std::vector<std::string_view> default_lora_targets;  // peft's default for the family

  int64_t encoder_block_params() const;
  int64_t decoder_block_params() const;
  int64_t total_params() const;
  /// Weights cast by autocast for matmuls: every block linear, the head (or the tied
  /// embedding matrix used as the head), pooler / conv front-end. Not embeddings or norms.
  int64_t matmul_weight_params() const;
  /// Block linear weights: what bitsandbytes / fp8 quantisation replaces.
  int64_t quantizable_params() const;
  int64_t largest_block_params() const;
  int64_t largest_matrix_params() const;
};

/// The layout of a catalogue entry with a transformer shape; nullopt for shapes this file
/// does not know (the caller then works from the published count alone).
std::optional<ModelLayout> transformer_layout(const Architecture& arch);

/// Exact torchvision parameter count of a built-in CNN (ResNet, VGG, DenseNet, MobileNetV2,
/// EfficientNet-B0, ConvNeXt-Tiny), from the architecture definition; nullopt otherwise.
std::optional<int64_t> cnn_parameter_count(const Architecture& arch);

/// LoRA parameters added for rank `rank` on the block linears whose HF name or role matches
/// one of `targets` (peft matching: a target matches a module whose name ends with it;
/// "all-linear" matches every block linear). Empty targets = the family default.
struct LoraPlan {
  int64_t trainable = 0;             // A and B matrices
  int64_t adapted_input_width = 0;   // sum of `in` over adapted modules, per block (activations)
  int64_t adapted_distinct_input_width = 0;  // the same, counting once the modules that read one tensor
  std::vector<std::string> modules;  // names matched
};
LoraPlan lora_plan(const ModelLayout& layout, int rank, const std::vector<std::string>& targets);

}  // namespace preflight::estimator
