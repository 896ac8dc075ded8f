"""The `trailblaze` command line: argument parsing (`main`), `trailblaze check` (`check`, `scope`),
its no-op (`noop`) and `--show-typed-tools` (`typedtools`)."""
