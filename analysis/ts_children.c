// All children of a node in one pass over its subtree, for the pinned tree-sitter runtime.
//
// Why: the public API has ts_node_child(n, i), which walks from the first child on every
// call (a loop over the children is quadratic), and the tree cursor, whose stack is a heap
// allocation per cursor. Walking every node's children either way was the largest single
// cost of a check after the parse itself (callgrind: ts_node_child_iterator_next 10.6 % of
// all instructions). This file is compiled with the runtime's private headers and mirrors
// its ts_node__child (node.c, tree-sitter 0.25.1): hidden children are flattened into their
// parent exactly as the public API does, so pf_node_children(n)[i] == ts_node_child(n, i).
// pf_node_child_by_field_id is ts_node_child_by_field_id without a node built per child
// passed over. The differential tests in tests/analysis/syntax_test.cpp hold both to the
// public API.
#include "./language.h"
#include "./length.h"
#include "./subtree.h"
#include "./tree.h"
#include "analysis/ts_children.h"

static bool relevant(TSNode node, bool named_only) {
  Subtree subtree = *(const Subtree *)node.id;
  TSSymbol alias = (TSSymbol)node.context[3];
  if (!named_only) return ts_subtree_visible(subtree) || alias;
  if (alias) return ts_language_symbol_metadata(node.tree->language, alias).named;
  return ts_subtree_visible(subtree) && ts_subtree_named(subtree);
}

static uint32_t collect(TSNode node, bool named_only, TSNode *out, uint32_t capacity, uint32_t count) {
  Subtree subtree = *(const Subtree *)node.id;
  uint32_t child_count = ts_subtree_child_count(subtree);
  if (child_count == 0) return count;
  const TSSymbol *aliases = ts_language_alias_sequence(node.tree->language, subtree.ptr->production_id);
  const Subtree *children = ts_subtree_children(subtree);
  Length position = {node.context[0], {node.context[1], node.context[2]}};
  uint32_t structural_index = 0;
  for (uint32_t i = 0; i < child_count; ++i) {
    const Subtree *child = &children[i];
    TSSymbol alias = 0;
    if (!ts_subtree_extra(*child)) {
      if (aliases) alias = aliases[structural_index];
      ++structural_index;
    }
    if (i > 0) position = length_add(position, ts_subtree_padding(*child));
    TSNode child_node = ts_node_new(node.tree, child, position, alias);
    if (relevant(child_node, named_only)) {
      if (count < capacity) out[count] = child_node;
      ++count;
    } else {
      count = collect(child_node, named_only, out, capacity, count);
    }
    position = length_add(position, ts_subtree_size(*child));
  }
  return count;
}

uint32_t pf_node_children(TSNode node, bool named_only, TSNode *out, uint32_t capacity) {
  if (ts_node_is_null(node)) return 0;
  return collect(node, named_only, out, capacity, 0);
}

static uint32_t visible_child_count(Subtree subtree) {
  return ts_subtree_child_count(subtree) > 0 ? subtree.ptr->visible_child_count : 0;
}

// ts_node_child(node, 0): the first visible node below `node`, hidden levels flattened.
static bool first_visible_child(TSNode node, TSNode *out) {
  Subtree subtree = *(const Subtree *)node.id;
  uint32_t child_count = ts_subtree_child_count(subtree);
  const TSSymbol *aliases = ts_language_alias_sequence(node.tree->language, subtree.ptr->production_id);
  const Subtree *children = ts_subtree_children(subtree);
  Length position = {node.context[0], {node.context[1], node.context[2]}};
  uint32_t structural_index = 0;
  for (uint32_t i = 0; i < child_count; ++i) {
    const Subtree *child = &children[i];
    TSSymbol alias = 0;
    if (!ts_subtree_extra(*child)) {
      if (aliases) alias = aliases[structural_index];
      ++structural_index;
    }
    if (i > 0) position = length_add(position, ts_subtree_padding(*child));
    TSNode child_node = ts_node_new(node.tree, child, position, alias);
    if (relevant(child_node, false)) {
      *out = child_node;
      return true;
    }
    if (visible_child_count(*child) > 0) return first_visible_child(child_node, out);
    position = length_add(position, ts_subtree_size(*child));
  }
  return false;
}

static TSNode null_node(void) { return ts_node_new(NULL, NULL, length_zero(), 0); }

// ts_node_child_by_field_id (node.c) step for step, without a node built for each child
// passed over and with the hidden-child case answered in place.
TSNode pf_node_child_by_field_id(TSNode self, TSFieldId field_id) {
recur:
  if (!field_id || ts_node_is_null(self)) return null_node();
  Subtree subtree = *(const Subtree *)self.id;
  if (visible_child_count(subtree) == 0) return null_node();
  const TSFieldMapEntry *field_map, *field_map_end;
  ts_language_field_map(self.tree->language, subtree.ptr->production_id, &field_map, &field_map_end);
  if (field_map == field_map_end) return null_node();
  // The entries are sorted by field id: narrow them to `field_id`'s.
  while (field_map->field_id < field_id) {
    if (++field_map == field_map_end) return null_node();
  }
  while (field_map_end[-1].field_id > field_id) {
    if (field_map == --field_map_end) return null_node();
  }

  uint32_t child_count = ts_subtree_child_count(subtree);
  const TSSymbol *aliases = ts_language_alias_sequence(self.tree->language, subtree.ptr->production_id);
  const Subtree *children = ts_subtree_children(subtree);
  Length position = {self.context[0], {self.context[1], self.context[2]}};
  uint32_t structural_index = 0;
  for (uint32_t i = 0; i < child_count; ++i) {
    const Subtree *child = &children[i];
    if (i > 0) position = length_add(position, ts_subtree_padding(*child));
    if (!ts_subtree_extra(*child)) {
      TSSymbol alias = aliases ? aliases[structural_index] : 0;
      uint32_t index = structural_index++;
      if (index >= field_map->child_index) {
        TSNode child_node = ts_node_new(self.tree, child, position, alias);
        if (field_map->inherited) {
          // Hidden nodes' fields are inherited by their visible parent.
          if (field_map + 1 == field_map_end) {
            self = child_node;
            goto recur;
          }
          TSNode result = pf_node_child_by_field_id(child_node, field_id);
          if (result.id) return result;
          if (++field_map == field_map_end) return null_node();
        } else if (relevant(child_node, false)) {
          return child_node;
        } else if (visible_child_count(*child) > 0) {
          TSNode first;
          return first_visible_child(child_node, &first) ? first : null_node();
        } else if (++field_map == field_map_end) {
          return null_node();
        }
      }
    }
    position = length_add(position, ts_subtree_size(*child));
  }
  return null_node();
}
