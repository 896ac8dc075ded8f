"""doit commands of ours, registered as doit plugins (the `doit.COMMAND` entry points).

`doit dumpdb`: doit's own opens the dependency file with `dbm`, without reading the `dodo.py`,
so with our sqlite3 backend (`config.py`) it looked for `.doit.db` and failed with a traceback.
Ours reads the `dodo.py`'s `DOIT_CONFIG` (its `dep_file` and `backend`, as every doit command
that runs tasks does), dumps a sqlite3 database read-only, and hands any other backend, or a
directory without a `dodo.py`, to doit's own command, so other projects see no change.
"""

from __future__ import annotations

import json
import pprint
import sqlite3
from pathlib import Path
from typing import Any

from doit.cmd_base import DoitCmdBase
from doit.cmd_dumpdb import DumpDB as DoitDumpDB
from doit.exceptions import InvalidCommand, InvalidDodoFile


class DumpDB(DoitCmdBase):  # type: ignore[misc]
    """dump dependency DB"""

    doc_purpose = "dump dependency DB"
    doc_usage = ""
    doc_description = None
    cmd_options = ()

    def execute(self, params: Any, args: list[str]) -> int:
        try:
            self.loader.setup(params)
            params.update_defaults(self.loader.load_doit_config())
        except InvalidDodoFile:
            pass  # no dodo.py here: doit's defaults, as doit's own dumpdb uses
        dep_file = str(params["dep_file"])  # our DepFile's path, without making the directory
        if params["backend"] != "sqlite3":
            result: int | None = DoitDumpDB.execute(self, {"dep_file": dep_file}, args)
            return result or 0
        return dump_sqlite3(Path(dep_file))

    def _execute(self) -> int:  # pragma: no cover - `execute` does the work
        return 0


def dump_sqlite3(path: Path) -> int:
    """Print every task's record of doit's sqlite3 database at `path`, as doit's `dumpdb` prints
    a dbm one; the database is opened read-only (nothing is created or changed)."""
    print("DBM type is 'sqlite3'")
    if not path.is_file():
        raise InvalidCommand(f"no dependency file '{path}': doit has not run a task here yet")
    connection = sqlite3.connect(path.absolute().as_uri() + "?mode=ro", uri=True)
    try:
        rows = connection.execute("select task_id, task_data from doit order by task_id").fetchall()
    except sqlite3.DatabaseError as exc:
        raise InvalidCommand(f"'{path}' is not doit's sqlite3 database: {exc}") from None
    finally:
        connection.close()
    for task_id, data in rows:
        try:
            value: Any = json.loads(data)
        except (TypeError, ValueError):
            value = data
        print(f"{task_id} -> {pprint.pformat(value, indent=4, width=100)}")
    return 0


__all__ = ["DumpDB", "dump_sqlite3"]
