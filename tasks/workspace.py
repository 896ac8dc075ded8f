"""The product's tasks (`check`, `surfaces`, `toolchain`, `replay`) on the bundled `trailmaps/` workspace."""

from __future__ import annotations

from tasks.paths import WORKSPACE
from trailblaze.doit_tasks import make_tasks

_TASKS = make_tasks(WORKSPACE)
task_check = _TASKS["task_check"]
task_surfaces = _TASKS["task_surfaces"]
task_toolchain = _TASKS["task_toolchain"]
task_replay = _TASKS["task_replay"]
