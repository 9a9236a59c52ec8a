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
#include "./alloc.h"
#include "./language.h"
#include "./length.h"
#include "./subtree.h"
#include "./tree.h"

#include <string.h>
#include "analysis/ts_children.h"

// A node's direct children (hidden ones included), as node.c's NodeChildIterator walks them,
// but handing out the subtree, position and alias instead of a TSNode: most children are
// passed over, and only the one returned needs a node built.
typedef struct {
  const Subtree *children;
  const TSSymbol *aliases;
  uint32_t count;
  uint32_t index;
  uint32_t structural_index;
  Length position;
} ChildIter;

typedef struct {
  const Subtree *subtree;
  Length position;
  TSSymbol alias;
} Child;

static inline ChildIter child_iter(TSNode node) {
  Subtree subtree = *(const Subtree *)node.id;
  ChildIter it = {NULL, NULL, 0, 0, 0, {node.context[0], {node.context[1], node.context[2]}}};
  it.count = ts_subtree_child_count(subtree);
  if (it.count == 0) return it;
  it.children = ts_subtree_children(subtree);
  it.aliases = ts_language_alias_sequence(node.tree->language, subtree.ptr->production_id);
  return it;
}

static inline bool child_next(ChildIter *it, Child *out) {
  if (it->index == it->count) return false;
  const Subtree *child = &it->children[it->index];
  out->alias = 0;
  if (!ts_subtree_extra(*child)) {
    if (it->aliases) out->alias = it->aliases[it->structural_index];
    ++it->structural_index;
  }
  if (it->index > 0) it->position = length_add(it->position, ts_subtree_padding(*child));
  out->subtree = child;
  out->position = it->position;
  it->position = length_add(it->position, ts_subtree_size(*child));
  ++it->index;
  return true;
}

// ts_node_new (node.c), inlined.
static inline TSNode make_node(const TSTree *tree, Child c) {
  return (TSNode){{c.position.bytes, c.position.extent.row, c.position.extent.column, c.alias}, c.subtree, tree};
}

// ts_node__is_relevant (node.c) for a child not yet made a node.
static inline bool relevant(const TSLanguage *language, Child c, bool named_only) {
  if (!named_only) return ts_subtree_visible(*c.subtree) || c.alias;
  if (c.alias) return ts_language_symbol_metadata(language, c.alias).named;
  return ts_subtree_visible(*c.subtree) && ts_subtree_named(*c.subtree);
}

static uint32_t collect(TSNode node, bool named_only, TSNode *out, uint32_t capacity, uint32_t count) {
  ChildIter it = child_iter(node);
  Child c;
  while (child_next(&it, &c)) {
    if (relevant(node.tree->language, c, named_only)) {
      if (count < capacity) out[count] = make_node(node.tree, c);
      ++count;
    } else if (ts_subtree_child_count(*c.subtree) > 0) {
      count = collect(make_node(node.tree, c), named_only, out, capacity, count);
    }
  }
  return count;
}

uint32_t pf_node_children(TSNode node, bool named_only, TSNode *out, uint32_t capacity) {
  if (!node.id) return 0;
  return collect(node, named_only, out, capacity, 0);
}

static inline uint32_t visible_child_count(Subtree subtree) {
  return ts_subtree_child_count(subtree) > 0 ? subtree.ptr->visible_child_count : 0;
}

// ts_node_child(node, 0): the first visible node below `node`, hidden levels flattened.
static bool first_visible_child(TSNode node, TSNode *out) {
  for (;;) {
    ChildIter it = child_iter(node);
    Child c;
    bool descended = false;
    while (child_next(&it, &c)) {
      if (relevant(node.tree->language, c, false)) {
        *out = make_node(node.tree, c);
        return true;
      }
      if (visible_child_count(*c.subtree) > 0) {
        node = make_node(node.tree, c);
        descended = true;
        break;
      }
    }
    if (!descended) return false;
  }
}

TSSymbol pf_node_symbol(TSNode node) {
  // ts_node__alias, ts_subtree_symbol and ts_language_public_symbol (node.c, language.c), inlined.
  TSSymbol symbol = node.context[3];
  if (!symbol) symbol = ts_subtree_symbol(*(const Subtree *)node.id);
  return symbol == ts_builtin_sym_error ? symbol : node.tree->language->public_symbol_map[symbol];
}

static TSNode null_node(void) { return (TSNode){{0, 0, 0, 0}, NULL, NULL}; }

// ts_node_child_by_field_id (node.c) step for step, without a node built for each child
// passed over and with the hidden-child case answered in place.
TSNode pf_node_child_by_field_id(TSNode self, TSFieldId field_id) {
recur:
  if (!field_id || !self.id) return null_node();
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

  ChildIter it = child_iter(self);
  Child c;
  while (child_next(&it, &c)) {
    if (ts_subtree_extra(*c.subtree)) continue;
    uint32_t index = it.structural_index - 1;
    if (index < field_map->child_index) continue;
    if (field_map->inherited) {
      // Hidden nodes' fields are inherited by their visible parent.
      if (field_map + 1 == field_map_end) {
        self = make_node(self.tree, c);
        goto recur;
      }
      TSNode result = pf_node_child_by_field_id(make_node(self.tree, c), field_id);
      if (result.id) return result;
      if (++field_map == field_map_end) return null_node();
    } else if (relevant(self.tree->language, c, false)) {
      return make_node(self.tree, c);
    } else if (visible_child_count(*c.subtree) > 0) {
      TSNode first;
      return first_visible_child(make_node(self.tree, c), &first) ? first : null_node();
    } else if (++field_map == field_map_end) {
      return null_node();
    }
  }
  return null_node();
}

// One level of the scan's explicit stack: a subtree's children, and where the next one is.
typedef struct {
  const Subtree *children;
  const TSSymbol *aliases;
  uint32_t child_count;
  uint32_t next;
  uint32_t structural_index;
  uint32_t depth;  // the visible depth of the children at this level
  Length position;
} ScanFrame;

typedef struct {
  ScanFrame *frames;
  uint32_t size;
  uint32_t capacity;
  ScanFrame *inline_frames;  // the caller's, on its stack: never reallocated or freed
} ScanStack;

static inline ScanFrame *scan_push(ScanStack *stack) {
  if (__builtin_expect(stack->size == stack->capacity, 0)) {
    uint32_t capacity = stack->capacity * 2;
    ScanFrame *grown;
    if (stack->frames == stack->inline_frames) {
      grown = ts_malloc(capacity * sizeof(ScanFrame));
      memcpy(grown, stack->frames, stack->size * sizeof(ScanFrame));
    } else {
      grown = ts_realloc(stack->frames, capacity * sizeof(ScanFrame));
    }
    stack->frames = grown;
    stack->capacity = capacity;
  }
  return &stack->frames[stack->size++];
}

static inline __attribute__((always_inline)) void scan_enter(ScanStack *stack, const TSTree *tree, Subtree subtree, Length position, uint32_t depth) {
  ScanFrame *frame = scan_push(stack);
  frame->children = ts_subtree_children(subtree);
  frame->aliases = ts_language_alias_sequence(tree->language, subtree.ptr->production_id);
  frame->child_count = ts_subtree_child_count(subtree);
  frame->next = 0;
  frame->structural_index = 0;
  frame->depth = depth;
  frame->position = position;
}

uint32_t pf_tree_scan(TSNode root, TSSymbol symbol, TSNode *out, uint32_t capacity, PfTreeShape *shape) {
  shape->node_count = 0;
  shape->max_depth = 0;
  if (!root.id) return 0;
  uint32_t found = 0;
  shape->node_count = 1;
  if (ts_node_symbol(root) == symbol) {
    if (capacity > 0) out[0] = root;
    found = 1;
  }

  ScanFrame inline_frames[64];
  ScanStack stack = {inline_frames, 0, 64, inline_frames};
  Subtree subtree = *(const Subtree *)root.id;
  Length position = {root.context[0], {root.context[1], root.context[2]}};
  if (ts_subtree_child_count(subtree) > 0) scan_enter(&stack, root.tree, subtree, position, 1);
  while (stack.size > 0) {
    ScanFrame *frame = &stack.frames[stack.size - 1];
    if (frame->next == frame->child_count) {
      --stack.size;
      continue;
    }
    uint32_t i = frame->next++;
    const Subtree *child = &frame->children[i];
    TSSymbol alias = 0;
    if (!ts_subtree_extra(*child)) {
      if (frame->aliases) alias = frame->aliases[frame->structural_index];
      ++frame->structural_index;
    }
    if (i > 0) frame->position = length_add(frame->position, ts_subtree_padding(*child));
    Length child_position = frame->position;
    frame->position = length_add(frame->position, ts_subtree_size(*child));
    uint32_t depth = frame->depth;
    bool visible = ts_subtree_visible(*child) || alias;
    if (visible) {
      ++shape->node_count;
      if (depth > shape->max_depth) shape->max_depth = depth;
      TSSymbol own = alias ? alias : ts_subtree_symbol(*child);
      // ts_language_public_symbol (language.c), inlined: this runs for every visible node.
      TSSymbol public_own = own == ts_builtin_sym_error ? own : root.tree->language->public_symbol_map[own];
      if (public_own == symbol) {
        if (found < capacity) out[found] = make_node(root.tree, (Child){child, child_position, alias});
        ++found;
      }
    }
    if (ts_subtree_child_count(*child) > 0)
      scan_enter(&stack, root.tree, *child, child_position, visible ? depth + 1 : depth);
  }
  if (stack.frames != inline_frames) ts_free(stack.frames);
  return found;
}
