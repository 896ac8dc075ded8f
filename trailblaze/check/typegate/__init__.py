"""The type gate: generated trail modules compiled by tsc, diagnostics mapped back to YAML.

Its rooms; each imports only rooms above it:

- `proof`: a compiler run counts only when it shows that it checked the program (canary and
  `--listFiles`);
- `settings`: the compiler options, batch size and timeout every part shares;
- `reads`: what the compilers read beyond the check's inputs (`--listFiles`), and whether the
  keys of the run covered it;
- `jobs`: one trail to compile, and what a batch of them gives back;
- `mapping`: a compiler diagnostic back to the trail, step, tool and YAML line it is about;
- `tsserver`: TypeScript 7's language server (`tsc --lsp`) as the gate talks to it, and the
  proven check of one module's text in it (canaries in the module);
- `compilation`: batches of trail modules through one proven compiler run each;
- `projects`: nested tool projects (a directory below `tools/` with its own tsconfig), each
  compiled as a project of its own: its files, arguments and findings;
- `declarations`: declarations emitted by tsc from each trailmap's scripted `.ts` tools (also
  the type check of those tools);
- `surfaces`: the module surface of each trailmap (`export interface Tools {...}`) and its probes;
- `surfacecheck`: the strict compile of the module surfaces, their probes and the declarations;
- `preparation`: what the first batch needs, made once (`Prepared`: compiler, declarations,
  surface keys, the surface check's verdicts);
- `remoteverdicts`: the remote result cache's part in a run;
- `orphans`: generated modules whose trail is gone;
- `warm`: a compiler kept open between runs (TypeScript 7's `--lsp`, for the language server's
  kept phase, `check.phase`), its answers proven by canaries in the module;
- `primed`: a language server a command starts before the pipeline loads, for the few modules
  of a one-edit check; what it cannot prove goes to `compilation`;
- `gate`: the type gate stage of a check (`TypeGate`), which uses the others;
- `tooltypes`: after a check, the types the compiler gives scripted tools, read from a probe
  beside a module surface (what `trailblaze check --show-typed-tools` lists).

Outside the package, only the check's orchestrator and its report stage import `gate`.

Layout in the scratch directory (`typegate/`, named in `trailblaze.state.scratch`):

- `surfaces/<trailmap>.d.ts`: one plain module per trailmap, `export interface Tools {...}`,
  rendered by the same entry renderer as the trailmap's `trailblaze-client.d.ts`;
- `tooldecl/<trailmap>/...`: declarations tsc emits from the trailmap's scripted `.ts` tools,
  so a scripted tool's input type is the one its own module declares (a nested project's at
  its directory's path, from its own compile);
- `trails/<trail path>.ts`: one generated module per trail, rewritten only when it changes;
- `tsconfig.<pid>.<n>.json`: the files of one compiler run (only cache misses);
- `tsconfig.json`: the project of the warm compiler (`warm.py`), the trails' modules with the
  gate's options (in the language server's scratch directory); in the command's, the project
  of the primed compiler (`primed.py`): the placeholders `primed/**/trail.ts`, one per depth;
- `tooltypes-<random>/`: the probe of `--show-typed-tools` and its emitted declarations, for
  the length of one listing.

No silent passes: every compiler run is proven (`proof.py`: the canary's error came back, the
output is complete and every file was in the program; `warm.py`: the canaries' errors came
back in the module's own answer); an unproven run, a diagnostic on a
generated line that maps to no call, in a surface, an unresolved import, a syntax error, a
timeout or a crash makes the affected trails an infrastructure problem, never a cached pass.
"""
