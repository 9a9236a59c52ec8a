// A node's children in one pass (see ts_children.c for why the public API is not enough).
#pragma once

#include <tree_sitter/api.h>

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// Writes the first `capacity` children of `node` (only the named ones when `named_only`) to
// `out`, in order, and returns how many there are in all, which may exceed `capacity`: call
// again with a buffer that large to get the rest. The same nodes, in the same order, as
// ts_node_child(node, i) / ts_node_named_child(node, i) for i below the count.
uint32_t pf_node_children(TSNode node, bool named_only, TSNode *out, uint32_t capacity);

// The same node as ts_node_child_by_field_id(node, field_id), found with less work.
TSNode pf_node_child_by_field_id(TSNode node, TSFieldId field_id);

// ts_node_symbol(node) in one call instead of three: rules ask it of nearly every node.
TSSymbol pf_node_symbol(TSNode node);

// What a walk over every node of a tree learns without visiting each through the public API.
typedef struct {
  uint32_t node_count;  // `root` and every node below it, named or not (as a tree cursor visits)
  uint32_t max_depth;   // of the deepest node below `root`, which is at depth 0
} PfTreeShape;

// Walks every node below `root` once, iteratively (any nesting is safe), filling `shape` and
// writing the first `capacity` nodes whose ts_node_symbol is `symbol` to `out` in preorder;
// returns how many there are in all, which may exceed `capacity`.
uint32_t pf_tree_scan(TSNode root, TSSymbol symbol, TSNode *out, uint32_t capacity, PfTreeShape *shape);

#ifdef __cplusplus
}
#endif
