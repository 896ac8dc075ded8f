"""The unit-test stage of a check: each trailmap's `*.test.ts` run with bun, cached per file.

inputs.py   what one test file's result depends on (its import graph, as bun resolves it)
junit.py    bun's JUnit report as test cases by file
phase.py    the stage: which files run, in which bun runs, and their results as findings
"""
