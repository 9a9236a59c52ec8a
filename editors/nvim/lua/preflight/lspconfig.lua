-- An nvim-lspconfig server entry for preflight, for setups that configure every server
-- through lspconfig:
--
--   require('preflight.lspconfig').register()
--   require('lspconfig').preflight.setup({
--     init_options = { select = { 'TG001' }, targetGpu = 'a100-80gb' },
--     settings = { preflight = { select = { 'TG001' }, targetGpu = 'a100-80gb' } },
--   })
local M = {}

function M.register()
  local configs = require('lspconfig.configs')
  if configs.preflight then return end -- registered already (or shipped by lspconfig itself)
  local util = require('lspconfig.util')
  configs.preflight = {
    default_config = {
      cmd = { 'preflight', 'lsp' },
      filetypes = { 'python' },
      root_dir = util.root_pattern('pyproject.toml', '.preflight.toml', '.git'),
      single_file_support = true,
      settings = { preflight = vim.empty_dict() }, -- answers workspace/configuration
    },
    docs = {
      description = [[
preflight: finds silent, expensive bugs in PyTorch training code (retained autograd graphs,
evaluation with autograd on, missing zero_grad, ...) and estimates peak VRAM.
`init_options` / `settings.preflight` take `select`, `ignore` (rule codes) and `targetGpu`.]],
    },
  }
end

return M
