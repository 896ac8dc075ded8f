"""`trailblaze lsp`: the check's own verdict in the editor, as the author types.

A language server over stdio (on pygls, the `lsp` extra). Its rooms, each importing only rooms
above it:

- `positions`: a finding's line and column (characters, 1-based) as an LSP range (0-based,
  UTF-16 code units), and back;
- `cursor`: what the text at a position is about (a tool name at a list item's key, an
  argument key inside a call's mapping), read from the lines, so that it works on a buffer
  that does not parse while it is being typed;
- `toolinfo`: the tools a trail's target may record, from the trailmap's resolved tool model
  (the surface's), for completion, hover and go-to-definition;
- `session`: one workspace kept warm between edits: the check of one trail file from its
  unsaved text (`trailblaze check FILE`'s own pipeline, on the workspace's `files/` state and
  result caches), the verdict per text, and what an edit to a tool or a manifest refreshes;
- `server`: the protocol (pygls): documents, diagnostics, completion, hover, definition.
"""
