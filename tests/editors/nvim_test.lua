-- Neovim end to end, headless, on Neovim 0.7's API: editors/nvim's module starts the real
-- server for a Python buffer (vim.lsp.start_client + buf_attach_client on 0.7), then this
-- script checks what a user would see. Run by nvim_test.sh; every step prints what the client
-- received, and the exit code (:cquit) says whether all checks held.
--
-- Environment: PF_TEST_FILE (a copy of buggy_train.py, edited in place), PF_EDITORS_DIR
-- (editors/); the `preflight` first on PATH is the server under test (see lib.sh).
local TIMEOUT_MS = 15000

local function say(fmt, ...)
  io.stdout:write(string.format(fmt, ...) .. '\n')
end

local function check(ok, fmt, ...)
  if not ok then error(string.format(fmt, ...), 0) end
end

-- Every publishDiagnostics exactly as it came off the wire (0.7 stores relatedInformation in
-- user_data.lsp as well, but the raw params are what the server actually sent).
local published = {}
local default_publish = vim.lsp.handlers['textDocument/publishDiagnostics']
vim.lsp.handlers['textDocument/publishDiagnostics'] = function(err, result, ctx, config)
  table.insert(published, result)
  return default_publish(err, result, ctx, config)
end

local function tg001_in(params)
  for _, d in ipairs(params.diagnostics) do
    if d.code == 'TG001' then return d end
  end
  return nil
end

local function latest_publish()
  return published[#published]
end

local function request(bufnr, method, params)
  local responses, err = vim.lsp.buf_request_sync(bufnr, method, params, TIMEOUT_MS)
  check(responses ~= nil, '%s: no answer (%s)', method, tostring(err))
  for _, response in pairs(responses) do
    check(response.err == nil, '%s failed: %s', method, vim.inspect(response.err))
    return response.result
  end
  error(method .. ': no client answered', 0)
end

local function start_client(bufnr)
  local client
  local attached = vim.wait(TIMEOUT_MS, function()
    for _, c in pairs(vim.lsp.buf_get_clients(bufnr)) do
      if c.name == 'preflight' and c.initialized then client = c end
    end
    return client ~= nil
  end, 20)
  check(attached, 'the preflight client did not start and initialize for the buffer')
  say('client: %s attached (id %d), offset encoding %s, root %s', client.name, client.id,
    client.offset_encoding, client.config.root_dir)
  return client
end

-- vim.diagnostic holds byte columns, converted from the server's UTF-16 ones; on a line with
-- é, CJK and an emoji before the finding, a slip on either side shows as the wrong text.
local function check_shown_span(bufnr)
  for _, shown in ipairs(vim.diagnostic.get(bufnr)) do
    if shown.code == 'TG001' then
      local line = vim.api.nvim_buf_get_lines(bufnr, shown.lnum, shown.lnum + 1, true)[1]
      local text = line:sub(shown.col + 1, shown.end_col)
      say('vim.diagnostic: TG001 on line %d underlines `%s`', shown.lnum + 1, text)
      check(text == 'loss', 'TG001 underlines `%s`, not `loss`', text)
      return shown
    end
  end
  error('TG001 was published but is not in vim.diagnostic', 0)
end

local function expect_tg001(bufnr)
  local uri = vim.uri_from_bufnr(bufnr)
  local diagnostic
  vim.wait(TIMEOUT_MS, function()
    local last = latest_publish()
    diagnostic = last and last.uri == uri and tg001_in(last)
    return diagnostic ~= nil
  end, 20)
  check(diagnostic, 'no TG001 diagnostic was published; got %s', vim.inspect(latest_publish()))
  local r = diagnostic.range
  say('diagnostic: %s %s (severity %d) at %d:%d-%d:%d (LSP, 0-based), source %s', diagnostic.code,
    diagnostic.message, diagnostic.severity, r.start.line, r.start.character, r['end'].line,
    r['end'].character, tostring(diagnostic.source))
  local related = diagnostic.relatedInformation or {}
  check(#related > 0, 'TG001 came without relatedInformation (the evidence chain)')
  for _, info in ipairs(related) do
    local at = info.location.range.start
    say('  related: %d:%d %s', at.line, at.character, info.message)
  end
  return diagnostic, check_shown_span(bufnr)
end

-- The quick fix goes through the client's own machinery, as `:lua vim.lsp.buf.code_action()`
-- on the finding's line would: the request with the line's diagnostics, the menu
-- (vim.ui.select, answered here by picking the `.detach()` entry), codeAction/resolve when
-- the action comes without an edit, and apply_workspace_edit in the client's encoding.
-- The cursor goes on the underlined span: Neovim 0.7 sends the cursor position as the range
-- (with the whole line's diagnostics as context), and the server answers for that range.
local function apply_detach_fix(bufnr, diagnostic, shown)
  local publishes_before = #published
  local offered, chosen = {}, nil
  local select = vim.ui.select
  vim.ui.select = function(items, opts, on_choice)
    for _, item in ipairs(items) do
      local action = item[2]
      table.insert(offered, action)
      say('code action: %q (kind %s%s)', opts.format_item(item), tostring(action.kind),
        action.isPreferred and ', preferred' or '')
      if not chosen and action.title:find('detach', 1, true) then chosen = item end
    end
    on_choice(chosen)
  end
  vim.api.nvim_win_set_cursor(0, { shown.lnum + 1, shown.col })
  vim.lsp.buf.code_action({ only = { 'quickfix' } })
  local line_no = diagnostic.range.start.line
  local function fixed_line()
    return vim.api.nvim_buf_get_lines(bufnr, line_no, line_no + 1, true)[1]
  end
  local applied = vim.wait(TIMEOUT_MS, function()
    return fixed_line():find('losses.append(loss.detach())', 1, true) ~= nil
  end, 20)
  vim.ui.select = select
  check(#offered > 0, 'the server offered no code action on line %d', line_no + 1)
  check(chosen, 'no `.detach()` quick fix among %d code actions', #offered)
  check(chosen[2].isPreferred, 'the `.detach()` fix is not the preferred one')
  say('after the fix, line %d reads: %s', line_no + 1, vim.trim(fixed_line()))
  check(applied, 'applying the `.detach()` fix did not produce `losses.append(loss.detach())`')
  local cleared = vim.wait(TIMEOUT_MS, function()
    local last = latest_publish()
    return #published > publishes_before and tg001_in(last) == nil
  end, 20)
  check(cleared, 'TG001 did not clear after the fix; last publish: %s', vim.inspect(latest_publish()))
  local last = latest_publish()
  say('diagnostics after the fix: %d (version %s), TG001 gone; vim.diagnostic holds %d', #last.diagnostics,
    tostring(last.version), #vim.diagnostic.get(bufnr))
end

local function hover(bufnr, position)
  local result = request(bufnr, 'textDocument/hover', {
    textDocument = { uri = vim.uri_from_bufnr(bufnr) },
    position = position,
  })
  check(result and result.contents, 'no hover at %d:%d', position.line, position.character)
  local contents = result.contents
  local text = type(contents) == 'string' and contents or contents.value or vim.inspect(contents)
  local lines = vim.split(text, '\n')
  say('hover (%s, %d lines): %s', contents.kind or 'plain', #lines, lines[1])
  check(text:find('TG001', 1, true), 'the hover does not explain TG001')
  check(text:find('.detach()', 1, true), 'the hover does not name the `.detach()` fix')
end

-- The module refreshes code lenses on attach; vim.lsp.codelens resolves them (when the
-- server asks for that) and keeps them for display. Then the lens's command runs through the
-- module's client command, whose answer is the report.
local function code_lens(bufnr, client)
  local provider = client.server_capabilities.codeLensProvider
  if not provider then
    say('code lens: none, the server does not advertise codeLensProvider (the VRAM code lens is not implemented yet)')
    return 'no code lens (not advertised)'
  end
  local lenses
  local shown = vim.wait(TIMEOUT_MS, function()
    vim.lsp.codelens.refresh()
    lenses = vim.lsp.codelens.get(bufnr)
    if #lenses == 0 then return false end
    for _, lens in ipairs(lenses) do
      if not lens.command then return false end
    end
    return true
  end, 200)
  check(shown, 'the server advertises code lenses but none (resolved) reached the client: %s', vim.inspect(lenses))
  for _, lens in ipairs(lenses) do
    say('code lens at line %d: %s (%s)', lens.range.start.line + 1, lens.command.title, lens.command.command)
  end
  -- :PreflightVramReport with the cursor under the lens runs the lens's command and floats
  -- the server's report.
  local float
  vim.api.nvim_win_set_cursor(0, { lenses[1].range.start.line + 1, 0 })
  vim.cmd('PreflightVramReport')
  local floated = vim.wait(TIMEOUT_MS, function()
    for _, win in ipairs(vim.api.nvim_list_wins()) do
      if vim.api.nvim_win_get_config(win).relative ~= '' then float = win end
    end
    return float ~= nil
  end, 20)
  check(floated, ':PreflightVramReport opened no window')
  local report = vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(float), 0, -1, false)
  say(':PreflightVramReport: a float of %d lines: %s', #report, report[1])
  check(table.concat(report, '\n'):find('VRAM', 1, true), 'the report float does not show a VRAM estimate')
  vim.api.nvim_win_close(float, true)
  return 'the code lens'
end

local function main()
  local file = os.getenv('PF_TEST_FILE')
  vim.opt.runtimepath:prepend(os.getenv('PF_EDITORS_DIR') .. '/nvim')
  vim.cmd('filetype on') -- -u NONE starts without filetype detection
  require('preflight').setup({}) -- the defaults: `preflight lsp` from PATH
  say('neovim %s', tostring(vim.version().major) .. '.' .. vim.version().minor .. '.' .. vim.version().patch)

  vim.cmd('edit ' .. vim.fn.fnameescape(file))
  local bufnr = vim.api.nvim_get_current_buf()
  check(vim.bo[bufnr].filetype == 'python', 'the buffer is not python (filetype %q)', vim.bo[bufnr].filetype)
  local client = start_client(bufnr)
  local diagnostic, shown = expect_tg001(bufnr)
  hover(bufnr, diagnostic.range.start)
  local lens = code_lens(bufnr, client)
  apply_detach_fix(bufnr, diagnostic, shown)
  return lens
end

local ok, failure = xpcall(main, debug.traceback)
if ok then
  say('PASS: neovim received TG001 with its evidence, a hover and %s, applied the `.detach()` fix and saw TG001 clear', failure)
  vim.cmd('qall!')
else
  say('FAIL: %s', failure)
  vim.cmd('cquit 1')
end
