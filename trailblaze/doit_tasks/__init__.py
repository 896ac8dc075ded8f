"""doit tasks for a workspace or a monorepo: the module a `dodo.py` imports.

    from trailblaze.doit_tasks import DOIT_CONFIG, task_check, task_surfaces, task_toolchain

or, for a workspace that is not the current directory::

    from trailblaze.doit_tasks import doit_config, make_tasks
    DOIT_CONFIG = doit_config("apps/shop")
    globals().update(make_tasks("apps/shop"))

The task dicts are made in `tasks`, what they run is `actions`; `config`, `uptodate`,
`recorded`, `surfaceplan`, `surfacebuild` and `clean` serve them. The names above are loaded
when first asked for, so that importing one of those modules (the CLI reads `uptodate`'s
digests) does not load doit and the task creators with it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from trailblaze.doit_tasks.config import doit_config, monorepo_config
    from trailblaze.doit_tasks.tasks import (
        check_task,
        make_tasks,
        monorepo_tasks,
        replay_task,
        run_tasks,
        surfaces_task,
        task_check,
        task_replay,
        task_surfaces,
        task_toolchain,
        toolchain_task,
    )

__all__ = [
    "check_task",
    "doit_config",
    "make_tasks",
    "monorepo_config",
    "monorepo_tasks",
    "replay_task",
    "run_tasks",
    "surfaces_task",
    "task_check",
    "task_replay",
    "task_surfaces",
    "task_toolchain",
    "toolchain_task",
]


_HOMES = {"doit_config": "config", "monorepo_config": "config"}
"""The module of each name above that is not defined in `tasks`."""


def __getattr__(name: str) -> Any:
    # `DOIT_CONFIG` too: `tasks` computes it for the current directory's workspace when asked.
    if name in __all__ or name == "DOIT_CONFIG":
        home = importlib.import_module(f"{__name__}.{_HOMES.get(name, 'tasks')}")
        return getattr(home, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
