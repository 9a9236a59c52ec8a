// Every naming heuristic the analysis uses, in one place (rules.md §2.9). Bindings are read
// first everywhere; these lists are the documented fallback for names whose binding cannot
// be seen (parameters, attributes set in another file).
#pragma once

#include <string_view>

namespace preflight::analysis::names {

bool is_model_name(std::string_view last_segment);      // model, net, backbone, ...
bool is_criterion_name(std::string_view last_segment);  // criterion, loss_fn, ...
bool is_loss_name(std::string_view last_segment);       // loss, total_loss, ...
bool is_functional_loss(std::string_view leaf);         // cross_entropy, mse_loss, ...
bool is_model_wrapper(std::string_view leaf);           // DistributedDataParallel, compile, ...
bool is_backward_wrapper_receiver(std::string_view last_segment);  // accelerator, scaler, ...
bool is_detaching_method(std::string_view m);           // item, detach, tolist, numpy
bool is_detaching_builtin(std::string_view f);          // float, int, len, ...
bool is_non_differentiable(std::string_view m);         // argmax, size, eq, ...
bool is_module_bookkeeping(std::string_view m);         // eval, train, parameters, ...
bool is_tensor_factory(std::string_view leaf);          // zeros, randn, tensor, ...
bool is_propagating_builtin(std::string_view f);        // sum, max, list, zip, ...
bool is_detached_attribute(std::string_view attr);      // grad, data, shape, ...
bool is_integer_reduction(std::string_view m);          // max, min, topk, sort, ...: `.indices`
bool is_not_a_model_callee(std::string_view lowered_dotted);  // tokenizer, processor, ...
bool is_optimizer_class(std::string_view leaf);         // SGD, Adam, AdamW, ...
bool is_optimizer_receiver_name(std::string_view lowered_last_segment);
bool is_evaluation_function_name(std::string_view name);  // validate, evaluate_*, ...
bool is_eval_loader_iterable(std::string_view lowered_dotted);  // val_loader, test_dataset
bool is_iterable_wrapper(std::string_view leaf);        // enumerate, tqdm, zip, iter, ...
// A project's own wrapper of torch.no_grad / inference_mode, defined in another file and
// named for it (`@smart_inference_mode()`, `with maybe_no_grad():`): its name is all the
// analysis sees, and a wrapper so named is taken to disable autograd.
bool names_a_no_grad_wrapper(std::string_view leaf);
// TG012: a loader stored under this name (assignment target, dict key, returning function)
// is for evaluation: `val`, `valid`, `eval`, `test` anywhere in the lower-cased name.
bool is_evaluation_loader_name(std::string_view name);
// TG012: names a launcher gives a distributed process. `local_rank` (an identifier or
// attribute, lower-cased: `args.local_rank`, `LOCAL_RANK`) and the environment variables
// torchrun / torch.distributed.launch / the DeepSpeed launcher set (`"LOCAL_RANK"`,
// `"RANK"`, `"WORLD_SIZE"`, `"MASTER_ADDR"`, `"MASTER_PORT"`), also as the `--local_rank`
// option string the DeepSpeed launcher passes.
bool is_local_rank_name(std::string_view lowered_last_segment);
bool is_launcher_string(std::string_view literal);
// A callee whose last segment mentions a step (`optimizer.step()`, `scaler.step(opt)`,
// `train_step(batch)`): a call that may update parameters (TG004, TG008).
bool names_a_step(std::string_view leaf);
// A name containing `optim` (`optimizer`, `optim_g`), lower-cased: an optimizer whose binding
// cannot be seen (TG004).
bool names_an_optimizer(std::string_view lowered_last_segment);
// TG008: an argument whose text names a seed (`opt.dset_seed`, `seed=args.seed`,
// `SEED`), lower-cased: a value handed to a function so that it can seed.
bool names_a_seed(std::string_view lowered_text);
// TG008 and the project index: a seed-everything helper in common use (`seed_everything`,
// `set_seed`, `init_seeds`, ...: Lightning, transformers, mmcv, YOLO repositories), which
// seeds torch, NumPy and `random` together.
bool is_seed_everything_helper(std::string_view leaf);
// TG001: a collection named for models, optimizers, discriminators or heads (`netsD`,
// `optimizers`, `heads`), lower-cased: a loop over its indices makes one
// pass per member, not per batch.
bool names_a_model_collection(std::string_view lowered);

// Library facts, read from a call's qualified name (not heuristics: what these modules are).
bool is_tensor_function(std::string_view qualified);  // torch.stack, torch.nn.functional.relu, einops.rearrange
bool is_numpy_module(std::string_view qualified);     // numpy.*: arrays, never a graph
bool is_number_module(std::string_view qualified);    // time.*, math.*, random.*: Python numbers
// Methods that only tensors have (a tuple, dict or ModelOutput has none of them): a value
// that holds tensors and answers one of these is a tensor.
bool is_tensor_only_method(std::string_view m);       // mean, view, softmax, ...
// torch.nn layers whose forward returns one tensor (not LSTM / MultiheadAttention, which
// return tuples, nor Sequential, which returns whatever its last layer does).
bool is_single_tensor_layer(std::string_view qualified);  // torch.nn.Linear, torch.nn.Conv2d, ...
// Module methods that return the module itself: `net.to(device)`, `net.eval()`.
bool keeps_module(std::string_view method);

std::string lower(std::string_view s);
// `self.model.encoder` -> `encoder`.
std::string_view last_segment(std::string_view dotted);
bool contains(std::string_view haystack, std::string_view needle);

}  // namespace preflight::analysis::names
