"""doit tasks of trailblaze-doit: `doit check` checks the bundled `trailmaps/` workspace.

`doit list` shows every task. The task creators live in `tasks/`; the product's own come from
`trailblaze.doit_tasks`, the module a monorepo's dodo.py imports too.
"""

from __future__ import annotations

from tasks.bench import task_bench
from tasks.paths import WORKSPACE
from tasks.workspace import task_check, task_replay, task_surfaces, task_toolchain
from trailblaze.doit_tasks import doit_config

DOIT_CONFIG = doit_config(WORKSPACE)

__all__ = [
    "DOIT_CONFIG",
    "task_bench",
    "task_check",
    "task_replay",
    "task_surfaces",
    "task_toolchain",
]
