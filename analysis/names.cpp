#include "analysis/names.h"

#include <algorithm>
#include <cctype>
#include <array>
#include <string>

namespace preflight::analysis::names {
namespace {

template <size_t N>
bool in(const std::array<std::string_view, N>& list, std::string_view s) {
  return std::find(list.begin(), list.end(), s) != list.end();
}

constexpr std::array<std::string_view, 19> kModelNames = {
    "model", "net", "network", "module", "backbone", "encoder", "decoder", "generator",
    "discriminator", "policy", "critic", "actor", "student", "teacher", "classifier",
    "transformer", "gen", "disc", "ema_model"};
constexpr std::array<std::string_view, 7> kCriterionNames = {
    "criterion", "loss_fn", "loss_func", "lossfn", "loss_function", "objective", "crit"};
constexpr std::array<std::string_view, 17> kLossNames = {
    "loss", "losses", "total_loss", "train_loss", "val_loss", "valid_loss", "test_loss",
    "batch_loss", "running_loss", "epoch_loss", "cost", "loss_val", "l", "total", "sum_loss",
    "loss_sum", "accum_loss"};
constexpr std::array<std::string_view, 19> kFunctionalLosses = {
    "cross_entropy", "binary_cross_entropy", "binary_cross_entropy_with_logits", "nll_loss",
    "kl_div", "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "ctc_loss",
    "cosine_embedding_loss", "hinge_embedding_loss", "margin_ranking_loss", "multi_margin_loss",
    "soft_margin_loss", "triplet_margin_loss", "poisson_nll_loss", "gaussian_nll_loss",
    "kl_div_loss"};
constexpr std::array<std::string_view, 9> kModelWrappers = {
    "DistributedDataParallel", "DataParallel", "DDP", "FSDP", "FullyShardedDataParallel",
    "compile", "from_pretrained", "create_model", "to_empty"};
constexpr std::array<std::string_view, 5> kBackwardWrapperWords = {"accel", "fabric", "scaler",
                                                                   "engine", "strategy"};
constexpr std::array<std::string_view, 6> kDetachingMethods = {
    "item", "detach", "detach_", "tolist", "numpy", "clone_detached"};
constexpr std::array<std::string_view, 12> kDetachingBuiltins = {
    "float", "int", "bool", "str", "len", "round", "repr", "hash", "id", "isinstance", "print",
    "type"};
constexpr std::array<std::string_view, 33> kNonDifferentiable = {
    "argmax", "argmin", "argsort", "argwhere", "nonzero", "bincount", "unique", "count_nonzero",
    "size", "numel", "dim", "ndimension", "element_size", "long", "int", "bool", "byte", "short",
    "char", "eq", "ne", "gt", "lt", "ge", "le", "isnan", "isinf", "isfinite", "all", "any",
    "equal", "data_ptr", "get_device"};
constexpr std::array<std::string_view, 34> kModuleBookkeeping = {
    "eval", "train", "parameters", "named_parameters", "buffers", "named_buffers", "state_dict",
    "load_state_dict", "zero_grad", "requires_grad_", "apply", "modules", "named_modules",
    "children", "named_children", "register_buffer", "register_parameter", "add_module",
    "compile", "share_memory", "step", "append", "extend", "insert", "clear", "update",
    "add_scalar", "log", "log_dict", "save", "print", "write", "info", "set_postfix"};
constexpr std::array<std::string_view, 18> kTensorFactories = {
    "tensor", "zeros", "ones", "randn", "rand", "randint", "empty", "full", "arange",
    "linspace", "eye", "zeros_like", "ones_like", "randn_like", "empty_like", "full_like",
    "as_tensor", "from_numpy"};
constexpr std::array<std::string_view, 16> kPropagatingBuiltins = {
    "sum", "min", "max", "abs", "sorted", "next", "iter", "list", "tuple", "zip", "enumerate",
    "reversed", "dict", "set", "map", "filter"};
constexpr std::array<std::string_view, 10> kDetachedAttributes = {
    "grad", "data", "shape", "dtype", "device", "ndim", "requires_grad", "is_cuda", "is_leaf",
    "grad_fn"};
constexpr std::array<std::string_view, 8> kIntegerReductions = {
    "max", "min", "topk", "sort", "kthvalue", "mode", "median", "nanmedian"};
// `pipeline` is preflight's addition: diffusers / transformers pipelines run under no_grad.
constexpr std::array<std::string_view, 8> kNotAModel = {
    "tokenizer", "featureextractor", "imageprocessor", "processor", "extractor", "config",
    "scheduler", "pipeline"};
constexpr std::array<std::string_view, 24> kOptimizerClasses = {
    "SGD", "Adam", "AdamW", "Adagrad", "Adadelta", "Adamax", "RMSprop", "Rprop", "NAdam",
    "RAdam", "LBFGS", "SparseAdam", "ASGD", "Lion", "Adafactor", "LAMB", "Lamb", "AdamW8bit",
    "Adam8bit", "PagedAdamW", "PagedAdamW8bit", "FusedAdam", "DeepSpeedCPUAdam", "Muon"};
// Receiver names that hold an optimizer (documented heuristic, rules.md §2.9 plus the class
// names themselves, lower-cased, so `adam.step()` is seen: TG003-N08).
constexpr std::array<std::string_view, 4> kOptimizerWords = {"optim", "opt", "scaler",
                                                             "accelerator"};
constexpr std::array<std::string_view, 11> kOptimizerVarNames = {
    "adam", "adamw", "sgd", "rmsprop", "adagrad", "lion", "lamb", "solver", "adafactor",
    "muon", "lbfgs"};
constexpr std::array<std::string_view, 22> kEvalNames = {
    "validate", "validation", "val", "evaluate", "eval", "evaluation", "test", "test_epoch",
    "test_loop", "inference", "infer", "predict", "prediction", "sample", "generate", "score",
    "benchmark", "validate_epoch", "val_epoch", "eval_epoch", "run_eval", "run_validation"};
constexpr std::array<std::string_view, 7> kEvalPrefixes = {
    "validate_", "validation_", "val_", "evaluate_", "eval_", "predict_", "inference_"};
constexpr std::array<std::string_view, 6> kEvalLoaderHints = {"val", "valid", "test",
                                                              "eval", "dev", "holdout"};
constexpr std::array<std::string_view, 6> kLoaderTokens = {"loader", "dataset", "batches",
                                                           "_data", "data_", "iterator"};
constexpr std::array<std::string_view, 5> kEvalLoaderNameWords = {"val", "valid", "eval", "test", "inference"};
constexpr std::array<std::string_view, 7> kLauncherEnvVars = {
    "LOCAL_RANK", "RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "--local_rank",
    "--local-rank"};
constexpr std::array<std::string_view, 10> kIterableWrappers = {
    "enumerate", "tqdm", "zip", "iter", "islice", "cycle", "chain", "trange", "list", "sorted"};

}  // namespace

namespace {
// torch's namespaces whose lowercase functions return tensors, and the lowercase functions
// of the top-level `torch` module that do not (they configure, save or compile).
constexpr std::array<std::string_view, 7> kTensorModules = {
    "torch", "torch.nn.functional", "torch.linalg", "torch.fft", "torch.special", "torch.nn.init",
    "einops"};
constexpr std::array<std::string_view, 36> kTorchNonTensorFunctions = {
    "compile", "save", "load", "manual_seed", "seed", "initial_seed", "set_grad_enabled",
    "no_grad", "enable_grad", "inference_mode", "is_tensor", "is_storage", "is_floating_point",
    "is_complex", "is_grad_enabled", "is_inference_mode_enabled", "numel", "device",
    "get_default_dtype", "set_default_dtype", "set_default_device", "set_num_threads",
    "get_num_threads", "set_num_interop_threads", "use_deterministic_algorithms",
    "set_printoptions", "set_float32_matmul_precision", "get_float32_matmul_precision",
    "typename", "get_rng_state", "set_rng_state", "finfo", "iinfo", "set_anomaly_enabled",
    "are_deterministic_algorithms_enabled", "is_nonzero"};
constexpr std::array<std::string_view, 5> kNumberModules = {"time", "math", "random", "statistics",
                                                            "timeit"};
constexpr std::array<std::string_view, 40> kTensorOnlyMethods = {
    "mean", "sum", "prod", "std", "var", "norm", "view", "view_as", "reshape", "flatten",
    "squeeze", "unsqueeze", "permute", "transpose", "contiguous", "float", "half", "bfloat16",
    "double", "softmax", "log_softmax", "sigmoid", "tanh", "relu", "exp", "log", "pow", "sqrt",
    "clamp", "masked_fill", "matmul", "mm", "bmm", "expand", "expand_as", "repeat", "narrow",
    "gather", "type_as", "abs"};

std::string_view module_of(std::string_view qualified) {
  size_t dot = qualified.rfind('.');
  return dot == std::string_view::npos ? std::string_view{} : qualified.substr(0, dot);
}
std::string_view leaf_of(std::string_view qualified) {
  size_t dot = qualified.rfind('.');
  return dot == std::string_view::npos ? qualified : qualified.substr(dot + 1);
}
std::string_view root_of(std::string_view qualified) { return qualified.substr(0, qualified.find('.')); }
}  // namespace

bool is_tensor_function(std::string_view qualified) {
  std::string_view mod = module_of(qualified), leaf = leaf_of(qualified);
  if (leaf.empty() || !(std::islower(static_cast<unsigned char>(leaf[0])) || leaf[0] == '_')) return false;
  if (!in(kTensorModules, mod)) return false;
  return mod != "torch" || !in(kTorchNonTensorFunctions, leaf);
}
bool is_numpy_module(std::string_view qualified) { return root_of(qualified) == "numpy"; }
bool is_number_module(std::string_view qualified) {
  return qualified.find('.') != std::string_view::npos && in(kNumberModules, root_of(qualified));
}
bool is_tensor_only_method(std::string_view m) { return in(kTensorOnlyMethods, m); }

bool names_a_no_grad_wrapper(std::string_view leaf) {
  return leaf != "no_grad" && leaf != "inference_mode" &&
         (contains(leaf, "no_grad") || contains(leaf, "inference_mode")) && !leaf.starts_with("is_");
}

namespace {
constexpr std::array<std::string_view, 22> kSingleTensorLayers = {
    "Linear", "Bilinear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
    "ConvTranspose3d", "Embedding", "LayerNorm", "GroupNorm", "BatchNorm1d", "BatchNorm2d",
    "BatchNorm3d", "Dropout", "ReLU", "GELU", "Sigmoid", "Tanh", "Softmax", "LogSoftmax",
    "Identity"};
constexpr std::array<std::string_view, 9> kModuleKeepingMethods = {
    "to", "cuda", "cpu", "float", "half", "bfloat16", "double", "train", "eval"};
}  // namespace

bool is_single_tensor_layer(std::string_view qualified) {
  return module_of(qualified) == "torch.nn" && in(kSingleTensorLayers, leaf_of(qualified));
}
bool keeps_module(std::string_view method) { return in(kModuleKeepingMethods, method); }

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

std::string_view last_segment(std::string_view dotted) {
  size_t dot = dotted.rfind('.');
  return dot == std::string_view::npos ? dotted : dotted.substr(dot + 1);
}

bool contains(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

bool is_model_name(std::string_view s) { return in(kModelNames, s); }
bool is_criterion_name(std::string_view s) { return in(kCriterionNames, s); }
bool is_loss_name(std::string_view s) { return in(kLossNames, s); }
bool is_functional_loss(std::string_view s) { return in(kFunctionalLosses, s); }
bool is_model_wrapper(std::string_view s) { return in(kModelWrappers, s); }
bool is_detaching_method(std::string_view s) { return in(kDetachingMethods, s); }
bool is_detaching_builtin(std::string_view s) { return in(kDetachingBuiltins, s); }
bool is_non_differentiable(std::string_view s) { return in(kNonDifferentiable, s); }
bool is_module_bookkeeping(std::string_view s) { return in(kModuleBookkeeping, s); }
bool is_tensor_factory(std::string_view s) { return in(kTensorFactories, s); }
bool is_propagating_builtin(std::string_view s) { return in(kPropagatingBuiltins, s); }
bool is_detached_attribute(std::string_view s) { return in(kDetachedAttributes, s); }
bool is_integer_reduction(std::string_view s) { return in(kIntegerReductions, s); }
bool is_optimizer_class(std::string_view s) { return in(kOptimizerClasses, s); }
bool is_iterable_wrapper(std::string_view s) { return in(kIterableWrappers, s); }

bool is_backward_wrapper_receiver(std::string_view last) {
  std::string l = lower(last);
  for (auto w : kBackwardWrapperWords)
    if (contains(l, w)) return true;
  return false;
}

bool is_not_a_model_callee(std::string_view lowered_dotted) {
  for (auto w : kNotAModel)
    if (contains(lowered_dotted, w)) return true;
  return false;
}

bool is_optimizer_receiver_name(std::string_view l) {
  if (contains(l, "sched")) return false;
  for (auto w : kOptimizerWords)
    if (contains(l, w)) return true;
  return in(kOptimizerVarNames, l);
}

bool is_evaluation_function_name(std::string_view name) {
  std::string n = lower(name);
  size_t i = n.find_first_not_of('_');
  std::string_view s = i == std::string::npos ? std::string_view{} : std::string_view(n).substr(i);
  if (s == "forward") return false;
  // A policy's `evaluate_actions` / `predict_values` (Stable-Baselines3's API, round 25:
  // RL4LMs) give the log-probabilities and values PPO's loss backwards through.
  if (s == "evaluate_actions" || s == "predict_values") return false;
  if (in(kEvalNames, s)) return true;
  for (auto p : kEvalPrefixes)
    if (s.starts_with(p)) return true;
  return false;
}

bool is_eval_loader_iterable(std::string_view l) {
  if (contains(l, "train")) return false;
  bool loader = false, hint = false;
  for (auto t : kLoaderTokens) loader = loader || contains(l, t);
  for (auto h : kEvalLoaderHints) hint = hint || contains(l, h);
  return loader && hint;
}

bool is_evaluation_loader_name(std::string_view name) {
  std::string l = lower(name);
  for (auto w : kEvalLoaderNameWords)
    if (contains(l, w)) return true;
  return false;
}

bool is_local_rank_name(std::string_view l) { return l == "local_rank"; }

bool is_launcher_string(std::string_view literal) { return in(kLauncherEnvVars, literal); }

bool names_a_step(std::string_view leaf) { return leaf.find("step") != std::string_view::npos; }

bool names_an_optimizer(std::string_view l) { return l.find("optim") != std::string_view::npos; }

bool names_a_seed(std::string_view l) { return l.find("seed") != std::string_view::npos; }

bool names_a_model_collection(std::string_view l) {
  // Not `layer` or `block`: data comes in blocks too (`blocks = torch.split(x, n)`).
  static constexpr std::string_view kParts[] = {"net",    "model", "optim", "disc",      "generator",
                                                "head",   "expert", "critic", "agent", "scheduler"};
  static constexpr std::string_view kData[] = {"data", "load", "batch", "sample", "example", "image", "text"};
  auto has = [&](std::string_view part) { return l.find(part) != std::string_view::npos; };
  return std::any_of(std::begin(kParts), std::end(kParts), has) &&
         std::none_of(std::begin(kData), std::end(kData), has);
}

bool is_seed_everything_helper(std::string_view leaf) {
  static constexpr std::string_view kNames[] = {"seed_everything", "set_seed",      "set_random_seed",
                                                "seed_all",        "init_seeds",    "set_seeds",
                                                "setup_seed",      "fix_seed",      "set_all_seeds",
                                                "seed_torch",      "set_global_seeds"};
  return std::find(std::begin(kNames), std::end(kNames), leaf) != std::end(kNames);
}

}  // namespace preflight::analysis::names
