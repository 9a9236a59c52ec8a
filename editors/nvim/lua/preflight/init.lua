-- preflight for Neovim: starts `preflight lsp` for Python buffers, rooted at the nearest
-- pyproject.toml / .preflight.toml / .git. Uses vim.lsp.start on Neovim >= 0.8 and falls back
-- to vim.lsp.start_client + vim.lsp.buf_attach_client on 0.7 (Debian 12's neovim).
--
--   require('preflight').setup({ select = { 'TG001', 'TG003' }, target_gpu = 'a100-80gb' })
local M = {}

M.defaults = {
  cmd = { 'preflight', 'lsp' },
  filetypes = { 'python' },
  root_markers = { 'pyproject.toml', '.preflight.toml', '.git' },
  select = {}, -- run only these rules (empty: the project's configuration, else all)
  ignore = {}, -- never run these rules
  target_gpu = nil, -- e.g. 'a100-80gb' for the VRAM verdict
  codelens = true, -- refresh the peak-VRAM code lens when the server offers it
  on_attach = nil, -- function(client, bufnr), called after preflight's own set-up
}

local options = vim.deepcopy(M.defaults)

-- What the server reads from initializationOptions and the `preflight` section of
-- workspace/configuration. Empty settings are left out so the project's file still applies.
function M.server_settings(opts)
  local settings = {}
  if opts.select and #opts.select > 0 then settings.select = opts.select end
  if opts.ignore and #opts.ignore > 0 then settings.ignore = opts.ignore end
  if opts.target_gpu and opts.target_gpu ~= '' then settings.targetGpu = opts.target_gpu end
  -- An empty Lua table is encoded as a JSON array; the server expects an object.
  if next(settings) == nil then return vim.empty_dict() end
  return settings
end

-- Nearest directory above the buffer's file holding any root marker; the file's own
-- directory when there is none (single-file mode). Written without vim.fs, which 0.7 lacks.
function M.find_root(bufnr, markers)
  local file = vim.api.nvim_buf_get_name(bufnr)
  local start = file ~= '' and vim.fn.fnamemodify(file, ':p:h') or vim.fn.getcwd()
  local dir = start
  while true do
    for _, marker in ipairs(markers) do
      if vim.loop.fs_stat(dir .. '/' .. marker) then return dir end
    end
    local parent = vim.fn.fnamemodify(dir, ':h')
    if parent == dir then return start end
    dir = parent
  end
end

local function refresh_codelens_on_edits(client, bufnr)
  if not (options.codelens and client.server_capabilities.codeLensProvider) then return end
  local group = vim.api.nvim_create_augroup('preflight_codelens_' .. bufnr, { clear = true })
  vim.api.nvim_create_autocmd({ 'BufEnter', 'InsertLeave', 'BufWritePost', 'CursorHold' }, {
    group = group,
    buffer = bufnr,
    callback = function() vim.lsp.codelens.refresh() end,
  })
  vim.lsp.codelens.refresh()
end

local function on_attach(client, bufnr)
  refresh_codelens_on_edits(client, bufnr)
  if options.on_attach then options.on_attach(client, bufnr) end
end

-- The server's preflight.showVramReport answers {markdown, report, ...}; shown in a float.
local function show_report(err, result)
  if err then return vim.notify('preflight: ' .. err.message, vim.log.levels.ERROR) end
  if type(result) ~= 'table' or type(result.markdown) ~= 'string' then
    return vim.notify('preflight: no training job found in this file', vim.log.levels.INFO)
  end
  vim.lsp.util.open_floating_preview(vim.split(result.markdown, '\n'), 'markdown', { border = 'single' })
end

-- Runs preflight.showVramReport on the server; arguments are [{uri, job}] as the code lens
-- carries them. Registered as a client command, so running the lens (vim.lsp.codelens.run())
-- shows the report instead of discarding the server's answer.
local function request_report(client, arguments, bufnr)
  local params = { command = 'preflight.showVramReport', arguments = arguments }
  if vim.fn.has('nvim-0.11') == 1 then
    client:request('workspace/executeCommand', params, show_report, bufnr) -- a method from 0.11
  else
    client.request('workspace/executeCommand', params, show_report, bufnr)
  end
end

local commands = {
  ['preflight.showVramReport'] = function(command, ctx)
    local client = vim.lsp.get_client_by_id(ctx.client_id)
    if client then request_report(client, command.arguments, ctx.bufnr) end
  end,
}

function M.client_config(bufnr)
  local settings = M.server_settings(options)
  local root = M.find_root(bufnr, options.root_markers)
  return {
    name = 'preflight',
    cmd = options.cmd,
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = root } },
    init_options = settings,
    settings = { preflight = settings },
    on_attach = on_attach,
    commands = commands,
  }
end

-- Neovim 0.7: one client per root, attached to each buffer by hand.
local clients_by_root = {}
local function start_07(config, bufnr)
  local id = clients_by_root[config.root_dir]
  if not (id and vim.lsp.get_client_by_id(id)) then
    id = vim.lsp.start_client(config)
    if not id then return nil end
    clients_by_root[config.root_dir] = id
  end
  vim.lsp.buf_attach_client(bufnr, id)
  return id
end

--- Starts (or reuses) the preflight client for a buffer; returns the client id.
function M.start(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local config = M.client_config(bufnr)
  if vim.lsp.start then return vim.lsp.start(config, { bufnr = bufnr }) end
  return start_07(config, bufnr)
end

local function preflight_client(bufnr)
  local attached = vim.lsp.get_clients and vim.lsp.get_clients({ bufnr = bufnr }) or vim.lsp.buf_get_clients(bufnr)
  for _, client in pairs(attached) do
    if client.name == 'preflight' then return client end
  end
  return nil
end

--- Applies every safe fix of the buffer (the server's source.fixAll.preflight action).
function M.fix_all()
  local context = { only = { 'source.fixAll.preflight' }, diagnostics = {} }
  if vim.fn.has('nvim-0.8') == 1 then
    vim.lsp.buf.code_action({ context = context, apply = true })
  else
    vim.lsp.buf.code_action(context) -- 0.7 takes the context itself and always asks
  end
end

--- Shows the VRAM report of the training job whose code lens is nearest above the cursor
--- (the file's first job when there is none).
function M.vram_report()
  local bufnr = vim.api.nvim_get_current_buf()
  local client = preflight_client(bufnr)
  if not client then return vim.notify('preflight: no server attached to this buffer', vim.log.levels.WARN) end
  local arguments = { { uri = vim.uri_from_bufnr(bufnr), job = 0 } }
  local cursor = vim.api.nvim_win_get_cursor(0)[1] - 1
  local best
  for _, lens in ipairs(vim.lsp.codelens.get(bufnr) or {}) do
    local command = lens.command
    if command and command.command == 'preflight.showVramReport' and lens.range.start.line <= cursor and
        (not best or lens.range.start.line > best.range.start.line) then
      best = lens
    end
  end
  if best then arguments = best.command.arguments end
  request_report(client, arguments, bufnr)
end

function M.setup(opts)
  options = vim.tbl_deep_extend('force', vim.deepcopy(M.defaults), opts or {})
  local group = vim.api.nvim_create_augroup('preflight', { clear = true })
  vim.api.nvim_create_autocmd('FileType', {
    group = group,
    pattern = options.filetypes,
    callback = function(args) M.start(args.buf) end,
  })
  vim.api.nvim_create_user_command('PreflightFixAll', M.fix_all, { desc = 'Apply every safe preflight fix' })
  vim.api.nvim_create_user_command('PreflightVramReport', M.vram_report, { desc = 'Show the VRAM report' })
end

return M
