// Activation memory: what autograd keeps for backward, derived per block type from the
// tensors each operation of the Hugging Face implementation saves (see activations.cpp),
// and what a forward pass without autograd keeps live (inference, prefill, decode).
#pragma once

#include <cstdint>
#include <string>

#include "estimator/profile.h"
#include "estimator/run.h"

namespace preflight::estimator {

/// Training: bytes per device at the start of backward, split the way the phases need them.
struct TrainingActivations {
  bool known = false;
  std::string method;             // how the figure was obtained, for the report
  int64_t retained = 0;           // every layer's saved tensors + embeddings + head inputs
  int64_t per_layer = 0;          // one layer's saved tensors (for checkpointing / offload)
  int64_t layer_backward = 0;     // the top layer's backward working set (transient)
  int64_t logits_held = 0;        // model-dtype logits the output object keeps until the step
  int64_t logits_log_probs = 0;   // fp32 log-probabilities cross-entropy saves
  int64_t logits_backward = 0;    // gradient buffers of the loss backward (transient)
};
TrainingActivations training_activations(const ModelProfile& profile, const Run& run);

/// A forward pass under no_grad over `tokens_per_sample` tokens of `samples` sequences
/// (inference, or generation prefill): the widest layer's live tensors plus the logits.
struct ForwardActivations {
  bool known = false;
  std::string method;
  int64_t working_set = 0;
  int64_t logits = 0;
};
ForwardActivations inference_forward(const ModelProfile& profile, const Run& run, int64_t samples,
                                     int64_t tokens_per_sample, bool last_token_logits_only);

/// One decode step: a token per sequence attending over `context` cached positions.
ForwardActivations decode_step(const ModelProfile& profile, const Run& run, int64_t sequences, int64_t context);

}  // namespace preflight::estimator
