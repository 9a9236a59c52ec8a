// Activation memory, derived from what each operation saves for backward.
//
// Method. A block is a list of tensors, each sized per token (h, I, head widths) or per
// token and key position (attention scores), with the dtype it actually has: under
// torch.autocast the residual stream and every norm output stay fp32 (layer_norm and
// softmax are autocast fp32 ops, and fp16 + fp32 promotes to fp32), each matmul saves its
// own low-precision copy of an fp32 input (casts of non-leaf tensors are not cached), pow
// and softmax run in fp32. PyTorch saves an input only when a gradient needs it: the input
// of a linear layer is kept for its weight gradient alone (`weight_grad_only` below), so a
// frozen base weight drops it; `x * cos` (RoPE) keeps cos, not x. Dropout keeps a 1-byte
// bool mask. Provenance: derived from PyTorch's derivatives.yaml and autocast op lists and
// the transformers modeling code of each family (gpt2, bert, distilbert, llama, vit);
// checked against the reference's measured synthetic stack (fp32 pre-LN GELU block: this
// method gives 64 bytes x h per token, its meta-device capture 32 x h at 2 bytes — equal)
// and against the T4 peaks in estimator.md §9.5 (bench/estimator_calibration.cpp).
// Encoder-decoder families use the reference's measured coefficients (§3.7.3); CNNs use the
// measured per-sample bytes of architectures.json.
#include "estimator/activations.h"

#include <algorithm>
#include <cmath>

#include "estimator/bytes.h"

namespace preflight::estimator {
namespace {

// Bytes per token (or per token and key position) of one block, by how TP divides them.
struct Inventory {
  double split = 0;       // inside a tensor-parallel region: divided by t
  double replicated = 0;  // norms, residual, dropout masks of the residual: divided only with SP
  double weight_grad_only = 0;  // saved only for a weight gradient (dropped when frozen)
  double scores = 0;      // per token per key position (multiply by seq)

  void need(double bytes, bool tp_split) { (tp_split ? split : replicated) += bytes; }
};

struct BlockTraits {
  bool post_norm = false;   // BERT family: LayerNorm after the residual add
  bool parallel = false;    // Phi-2 / GPT-J: attention and MLP read one norm
  bool fused_qkv = false;   // GPT-2: one c_attn matmul
  bool expand_kv = true;    // transformers' repeat_kv copies K/V to the full head count
  bool upcast_softmax = false;  // Llama-family eager attention: softmax(dtype=fp32).to(q.dtype)
  bool dropout = false;
};

BlockTraits traits_of(const ModelProfile& p, const Run& r) {
  const Shape& s = *p.shape();
  const std::string_view id = p.id;
  BlockTraits t;
  t.post_norm = id.starts_with("bert") || id.starts_with("roberta") || id.starts_with("distilbert");
  t.parallel = s.parallel_attention;
  t.fused_qkv = id.starts_with("gpt2") || id.starts_with("distilgpt2") || id.starts_with("starcoder");
  t.expand_kv = !t.fused_qkv;  // GPTBigCode multiplies against the single K/V head directly
  t.upcast_softmax = s.rms_norm();
  t.dropout = s.uses_dropout && r.training;
  return t;
}

// A norm's saved tensors for its input x. LayerNorm: x plus mean and rstd (fp32 per token).
// RMSNorm (HF): the fp32 copy (pow, mul) plus rstd, and the normalised tensor the weight
// multiply keeps for the norm weight's gradient.
void add_norm(Inventory& inv, const Shape& s, const Run& r) {
  const double h = s.hidden;
  if (s.rms_norm()) {
    inv.need(4 * h + 4, false);
    if (!r.base_frozen) inv.replicated += r.residual_bytes * h;
  } else {
    inv.need(r.residual_bytes * h + 8, false);
  }
}

// The input of `linears` matmuls that read the same tensor: under autocast each saves its own
// low-precision copy, otherwise they share the norm output. Kept for weight gradients only.
void add_matmul_inputs(Inventory& inv, const Run& r, double width, int linears) {
  inv.weight_grad_only += r.autocast ? double(r.act_bytes) * width * linears : double(r.residual_bytes) * width;
}

double eager_score_bytes(const Run& r, const BlockTraits& t) {
  const double softmax_out = r.autocast || t.upcast_softmax || r.act_bytes == 4 ? 4 : r.act_bytes;
  if (t.dropout) return softmax_out + 1 + r.act_bytes;  // probabilities, mask, dropped copy for P.V
  return softmax_out == r.act_bytes ? softmax_out : softmax_out + r.act_bytes;
}

void add_attention(Inventory& inv, const Shape& s, const Run& r, const BlockTraits& t) {
  const double h = s.hidden, q_width = double(s.heads) * s.head_dim_or_derived();
  const double kv_width = t.expand_kv ? q_width : double(s.kv_heads_or_heads()) * s.head_dim_or_derived();
  add_matmul_inputs(inv, r, h, t.fused_qkv ? 1 : 3);
  inv.need(r.act_bytes * (q_width + 2 * kv_width), true);  // q, k, v as the attention kernel keeps them
  if (r.attention == Attention::Eager) {
    inv.scores += eager_score_bytes(r, t) * s.heads;
  } else {
    inv.need(r.act_bytes * q_width + 4.0 * s.heads, true);  // output and fp32 logsumexp
  }
  inv.weight_grad_only += r.act_bytes * q_width;  // merged heads, the output projection's input
  if (t.dropout) inv.need(h, false);             // residual dropout mask
}

void add_mlp(Inventory& inv, const Shape& s, const Run& r, const BlockTraits& t) {
  const double h = s.hidden;
  const bool moe = s.num_experts > 0 && s.experts_per_token > 0;
  const double routed = moe ? s.experts_per_token : 1.0;
  const double I = (moe && s.moe_intermediate > 0 ? s.moe_intermediate : s.intermediate) * routed;
  const double a = r.act_bytes, wide = r.autocast ? 4.0 : a;
  add_matmul_inputs(inv, r, h * routed, s.gated_mlp ? 2 : 1);
  if (s.gated_mlp) {
    inv.need(3 * a * I, true);  // gate output (activation input), activation output, up output
    inv.weight_grad_only += a * I;  // gate * up, the down projection's input
  } else if (s.mlp_activation == "gelu_new") {
    // NewGELUActivation in Python: pow keeps an fp32 copy under autocast, tanh its output,
    // the final product keeps 0.5*x and (1 + tanh); the down projection casts the fp32 result.
    inv.need((wide + wide + a + wide) * I, true);
    inv.weight_grad_only += a * I;
  } else {
    inv.need(a * I, true);  // the fused activation keeps its input
    inv.weight_grad_only += a * I;
  }
  if (moe) inv.need(8.0 * s.num_experts, false);  // router logits and softmax, fp32
  if (t.dropout) inv.need(h, false);
}

Inventory block_inventory(const ModelProfile& p, const Run& r) {
  const Shape& s = *p.shape();
  const BlockTraits t = traits_of(p, r);
  Inventory inv;
  if (!t.post_norm) add_norm(inv, s, r);
  add_attention(inv, s, r, t);
  if (t.post_norm) add_norm(inv, s, r);
  if (!t.parallel && !t.post_norm) add_norm(inv, s, r);
  add_mlp(inv, s, r, t);
  if (t.post_norm) add_norm(inv, s, r);
  return inv;
}

// Bytes one block keeps for `tokens` tokens of `seq` positions, after TP / SP division and
// dropping weight-gradient-only inputs of frozen weights (LoRA adds its adapters' inputs).
double block_bytes(const Inventory& inv, const Run& r, const ModelProfile& p, double tokens, double seq) {
  const double t = r.tensor_parallel;
  double per_token = inv.split / t + inv.replicated / (r.sequence_parallel ? t : 1.0) + inv.scores * seq / t;
  const double wgo = r.base_frozen ? 0.0 : inv.weight_grad_only * (1.0 - r.frozen_fraction);
  per_token += wgo / t;
  // LoRA's A matrices keep their input for their own gradient: under autocast each casts its
  // own copy; otherwise modules that read one tensor share it.
  if (r.lora_params > 0) {
    const double width = r.autocast ? double(r.lora.adapted_input_width) : double(r.lora.adapted_distinct_input_width);
    per_token += double(r.autocast ? r.act_bytes : r.residual_bytes) * width / t;
  }
  (void)p;
  return per_token * tokens;
}

// Tensors outside the blocks: embedding dropout / LayerNorm, the final norm, the head input.
double outside_blocks(const ModelProfile& p, const Run& r, double tokens) {
  const Shape& s = *p.shape();
  const double h = s.hidden;
  const BlockTraits t = traits_of(p, r);
  double per_token = t.dropout ? h : 0.0;
  if (t.post_norm) per_token += r.residual_bytes * h + 8;  // embedding LayerNorm input
  else per_token += s.rms_norm() ? 4 * h + 4 : r.residual_bytes * h + 8;  // final norm
  if (r.logits && !r.base_frozen) per_token += (r.autocast ? r.act_bytes : r.residual_bytes) * h;
  if (!r.logits && r.head == Head::None) per_token += r.residual_bytes * h;  // a loss on the last hidden state
  return per_token * tokens;
}

// The top block's backward, with every other saved tensor still alive: eager attention
// materialises the score gradient (upcast to fp32 under autocast: two buffers at once);
// the MLP holds two intermediate-sized gradients; SDPA holds dq, dk, dv and an fp32 dq.
double layer_backward_bytes(const ModelProfile& p, const Run& r, double tokens, double seq) {
  const Shape& s = *p.shape();
  const double h = s.hidden, I = s.intermediate * (s.experts_per_token > 0 ? s.experts_per_token : 1);
  const double wide = r.autocast || s.rms_norm() ? 4.0 : r.act_bytes;
  const double attention = r.attention == Attention::Eager ? 2 * wide * s.heads * seq : (3.0 * r.act_bytes + 4) * h;
  const double mlp = 2.0 * r.act_bytes * I;
  return (std::max(attention, mlp) / r.tensor_parallel + 2.0 * r.residual_bytes * h) * tokens;
}

// Reference coefficients for encoder-decoder families (estimator.md §3.7.3, measured on the
// meta device at a 2-byte reference dtype).
struct EncDecCoefficients {
  double enc_linear, dec_linear, cross_kv, attn;
};
std::optional<EncDecCoefficients> encdec_coefficients(const Shape& s) {
  if (s.activation_family == "t5") return EncDecCoefficients{48.44, 60.58, 4.05, 6.0};
  if (s.activation_family == "whisper") return EncDecCoefficients{33.20, 40.21, 4.19, 2.0};
  return std::nullopt;
}

TrainingActivations encoder_decoder_training(const ModelProfile& p, const Run& r) {
  TrainingActivations out;
  const Shape& s = *p.shape();
  auto c = encdec_coefficients(s);
  if (!c) return out;
  const double h = s.hidden, a = s.heads, seq = double(r.seq);
  const double s_enc = s.encoder_seq_len > 0 ? s.encoder_seq_len : seq;
  const bool flash = r.attention != Attention::Eager;
  const double enc = c->enc_linear * h * s_enc + (flash ? 0 : c->attn * a * s_enc * s_enc);
  const double dec = c->dec_linear * h * seq + c->cross_kv * h * s_enc +
                     (flash ? 0 : c->attn * a * seq * seq + c->attn * a * seq * s_enc);
  const double scale = r.act_bytes / 2.0, b = double(r.batch);
  const double layers = s.layers + s.decoder_layers;
  const double total = (enc * s.layers + dec * s.decoder_layers) * b * scale;
  out.known = true;
  out.method = "measured encoder-decoder coefficients (" + s.activation_family + ", meta device, estimator.md 3.7.3)";
  out.per_layer = saturated_bytes(total / layers);
  out.retained = r.checkpointing
                     ? saturated_bytes(2.0 * b * h * (s.layers * s_enc + s.decoder_layers * seq) * scale) + out.per_layer
                     : saturated_bytes(total);
  return out;
}

void add_logits(TrainingActivations& out, const Shape& s, const Run& r) {
  if (!r.logits) return;
  double n = double(r.batch) * double(r.seq) * s.vocab / r.tensor_parallel;
  const bool chunked = r.loss == LossImpl::Chunked;
  if (chunked) n /= 8.0;  // torchtune / LitGPT default of 8 chunks; Liger never materialises the whole
  // HF computes logits in the model dtype (kept by the output object until the step), the
  // loss upcasts to fp32 and cross-entropy saves fp32 log-probabilities; its backward holds
  // two fp32 gradient buffers (nll and log-softmax). A chunked loss keeps one chunk of each.
  out.logits_held = chunked ? 0 : saturated_bytes(n * r.act_bytes);
  out.logits_log_probs = saturated_bytes(n * (chunked ? 4.0 + r.act_bytes : 4.0));
  out.logits_backward = saturated_bytes(n * 8);
}

TrainingActivations cnn_training(const ModelProfile& p, const Run& r) {
  TrainingActivations out;
  const CnnProfile& c = *p.arch->cnn;
  const double area = double(r.image) / c.reference_image_size;
  double bytes = double(c.activation_bytes_per_sample) * area * area * double(r.batch) * (r.act_bytes / 2.0);
  if (r.checkpointing) bytes *= 0.3;  // assumed (reference): block boundaries kept
  out.known = true;
  out.method = "measured per-sample activations (meta device, architectures.json)";
  out.retained = saturated_bytes(bytes);
  out.per_layer = out.retained;
  return out;
}

}  // namespace

TrainingActivations training_activations(const ModelProfile& p, const Run& r) {
  if (p.is_cnn()) return cnn_training(p, r);
  if (!p.has_shape()) return {};
  const Shape& s = *p.shape();
  if (p.arch->family == Family::EncoderDecoder) {
    TrainingActivations out = encoder_decoder_training(p, r);
    add_logits(out, s, r);
    return out;
  }
  TrainingActivations out;
  const Inventory inv = block_inventory(p, r);
  const double tokens = double(r.batch) * double(r.seq), seq = double(r.seq);
  const double layer = block_bytes(inv, r, p, tokens, seq);
  const int pp = r.pipeline_parallel;
  const double layers_per_stage = std::ceil(double(s.layers) / pp);
  const double in_flight = pp > 1 ? std::min<double>(pp, r.accumulation) : 1.0;  // 1F1B on the first stage
  double stored;
  if (r.checkpointing)  // each block keeps its input; one block is recomputed at a time
    stored = layers_per_stage * in_flight * r.residual_bytes * s.hidden * tokens + layer;
  else if (r.activation_offload)  // saved tensors go to host memory; about two blocks stay resident
    stored = std::min(layers_per_stage, 2.0) * layer;
  else
    stored = layers_per_stage * in_flight * layer;
  out.known = true;
  out.method = std::string("derived per block from saved tensors (") + std::string(attention_name(r.attention)) +
               " attention)";
  out.per_layer = saturated_bytes(layer);
  out.retained = saturated_bytes(stored + outside_blocks(p, r, tokens));
  out.layer_backward = saturated_bytes(layer_backward_bytes(p, r, tokens, seq));
  add_logits(out, s, r);
  return out;
}

ForwardActivations inference_forward(const ModelProfile& p, const Run& r, int64_t samples, int64_t tokens_per_sample,
                                     bool last_token_logits_only) {
  ForwardActivations out;
  const double tokens = double(samples) * double(tokens_per_sample);
  if (p.is_cnn()) {
    TrainingActivations t = cnn_training(p, r);
    out.known = true;
    out.method = "measured per-sample activations x 0.2 (assumed: no graph kept)";
    out.working_set = saturated_bytes(double(t.retained) * 0.2);
    return out;
  }
  if (!p.has_shape()) return out;
  const Shape& s = *p.shape();
  const double h = s.hidden, q_width = double(s.heads) * s.head_dim_or_derived();
  const double I = s.intermediate * (s.experts_per_token > 0 ? s.experts_per_token : 1);
  const double a = r.act_bytes;
  const double scores = r.attention == Attention::Eager ? double(s.heads) * tokens_per_sample * (4 + a) : 0.0;
  const double attention = a * 3 * q_width + scores;
  const double mlp = a * (s.gated_mlp ? 3 : 2) * I;
  const double per_token = 2.0 * r.residual_bytes * h + std::max(attention, mlp) / r.tensor_parallel;
  out.known = true;
  out.method = "one block's live tensors without autograd (derived)";
  out.working_set = saturated_bytes(per_token * tokens);
  if (s.vocab > 0 && (s.has_lm_head || r.logits)) {
    const double positions = last_token_logits_only ? double(samples) : tokens;
    const double bytes = last_token_logits_only ? 4.0 : a + (r.generation ? 4.0 : 0.0);
    out.logits = saturated_bytes(positions * s.vocab * bytes / r.tensor_parallel);
  }
  return out;
}

ForwardActivations decode_step(const ModelProfile& p, const Run& r, int64_t sequences, int64_t context) {
  ForwardActivations out;
  if (!p.has_shape()) return out;
  const Shape& s = *p.shape();
  const double n = double(sequences), a = r.act_bytes;
  const double I = s.intermediate * (s.experts_per_token > 0 ? s.experts_per_token : 1);
  const double scores = r.attention == Attention::Eager ? double(s.heads) * context * (4 + a) : 0.0;
  const double per_token = 2.0 * r.residual_bytes * s.hidden + std::max(scores, a * 3 * I) / r.tensor_parallel;
  out.known = true;
  out.method = "one token per sequence against the cache (derived)";
  out.working_set = saturated_bytes(per_token * n);
  if (s.vocab > 0) out.logits = saturated_bytes(n * s.vocab * (a + 8) / r.tensor_parallel);  // logits, fp32 copy, probabilities
  return out;
}

}  // namespace preflight::estimator
