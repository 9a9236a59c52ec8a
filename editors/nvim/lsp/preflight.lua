-- Neovim >= 0.11: `vim.lsp.enable('preflight')` picks this file up from the runtimepath.
-- Override fields with vim.lsp.config('preflight', { settings = { preflight = { ... } } }).
return {
  cmd = { 'preflight', 'lsp' },
  filetypes = { 'python' },
  root_markers = { 'pyproject.toml', '.preflight.toml', '.git' },
  settings = { preflight = vim.empty_dict() }, -- an object on the wire, not []
}
