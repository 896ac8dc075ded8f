-- Neovim's built-in LSP client against `trailblaze lsp` (tests/lsp/test_neovim.py runs it).
-- Opens the trail, waits for its diagnostics, makes each edit of $TB_EDITS in the buffer and
-- waits for them to change, and writes what it saw to $TB_OUT as JSON. Every wait has a deadline; an error is written too.
local out = os.getenv("TB_OUT")
local result = { steps = {} }

local function write()
  local file = assert(io.open(out, "w"))
  file:write(vim.json.encode(result))
  file:close()
end

local function seen(buf)
  local found = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    local lsp = d.user_data and d.user_data.lsp or {}
    table.insert(found, {
      lnum = d.lnum,
      col = d.col,
      code = d.code or lsp.code,
      message = d.message,
      severity = d.severity,
      source = d.source or lsp.source,
    })
  end
  return found
end

local ok, err = pcall(function()
  local deadline = tonumber(os.getenv("TB_WAIT_MS"))
  vim.cmd("edit " .. vim.fn.fnameescape(os.getenv("TB_TRAIL")))
  local buf = vim.api.nvim_get_current_buf()
  local id = vim.lsp.start_client({
    name = "trailblaze",
    cmd = vim.json.decode(os.getenv("TB_CMD")),
    root_dir = os.getenv("TB_ROOT"),
  })
  assert(id, "vim.lsp.start_client gave no client")
  assert(vim.lsp.buf_attach_client(buf, id), "the client did not attach to the buffer")

  local function step(name, wanted)
    local done = vim.wait(deadline, function()
      return wanted(vim.diagnostic.get(buf))
    end, 20)
    if not done then
      error("timed out waiting for " .. name .. "; diagnostics: " .. vim.inspect(seen(buf)))
    end
    table.insert(result.steps, { name = name, diagnostics = seen(buf) })
  end

  step("opened", function(d) return #d > 0 end)
  -- Each edit replaces one line; then the diagnostics must be none, or some again.
  for _, edit in ipairs(vim.json.decode(os.getenv("TB_EDITS"))) do
    vim.api.nvim_buf_set_lines(buf, edit.row, edit.row + 1, false, { edit.text })
    step(edit.name, function(d)
      if edit.clean then return #d == 0 end
      return #d > 0
    end)
  end
  result.buffer = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  vim.lsp.stop_client(id)
end)
result.ok = ok
if not ok then result.error = tostring(err) end
write()
vim.cmd("qa!")
