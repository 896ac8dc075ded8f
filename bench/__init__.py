"""The project's benchmark: synthetic workspaces (`bench.generate`), the measurements
(`bench.run`) and the reference-style baseline they are compared with (`bench.baseline`).

Run from the repository root: `python -m bench.run` (see `bench/README.md`).
"""
