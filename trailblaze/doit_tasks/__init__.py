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

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from trailblaze.doit_tasks.tasks import (
        check_task,
        doit_config,
        make_tasks,
        monorepo_config,
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


def __getattr__(name: str) -> Any:
    # `DOIT_CONFIG` too: `tasks` computes it for the current directory's workspace when asked.
    if name in __all__ or name == "DOIT_CONFIG":
        from trailblaze.doit_tasks import tasks  # noqa: PLC0415 - loaded when first asked for

        return getattr(tasks, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
