"""The Android programs of the fake device: ``input``, ``uiautomator``, ``am``, ``pm``, ``monkey``,
``dumpsys``, ``wm``, ``getprop``, ``pidof``, ``settings``, ``run-as``.

Each answers the command lines replay and adbutils send the way a device does (output text,
exit codes, the platform's own misspellings) and changes the device's ``DeviceState``: directly,
or through ``Gestures`` for ``input``; ``uiautomator dump`` asks the ``Renderer``. ``run-as``
runs the rest of its line as a modelled app (the spec's apps are its debug builds; a package
that is only installed is not debuggable), through the shell's own ``command``.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Sequence

from fakeadb.gestures import KEY_NAMES, Gestures
from fakeadb.media import DEFAULT_TIME_LIMIT, MP4_HEAD, Recorder, screen_png
from fakeadb.result import STDOUT, CommandResult
from fakeadb.spec import BROWSER_PACKAGE, LAUNCHER_PACKAGE
from fakeadb.state import DeviceState
from fakeadb.view import Renderer, flag

DEFAULT_DUMP_PATH = "/sdcard/window_dump.xml"
IDLE_ERROR_TEXT = "ERROR: could not get idle state.\n"


class AndroidCommands:
    """The programs of one device; ``run`` answers a command line's words."""

    def __init__(
        self,
        state: DeviceState,
        gestures: Gestures,
        view: Renderer,
        subcommand: Callable[[list[str]], CommandResult],
    ) -> None:
        self.state = state
        self.gestures = gestures
        self.view = view
        self.subcommand = subcommand
        """Runs one command's words as the shell does (``run-as`` hands its command on)."""
        self.recorder = Recorder()
        self.table: dict[str, Callable[[list[str]], CommandResult]] = {
            "input": self.input,
            "uiautomator": self.uiautomator,
            "am": self.am,
            "pm": self.pm,
            "monkey": self.monkey,
            "dumpsys": self.dumpsys,
            "wm": self.wm,
            "getprop": self.getprop,
            "pidof": self.pidof,
            "settings": self.settings,
            "appops": self.appops,
            "svc": self.svc,
            "screencap": self.screencap,
            "logcat": self.logcat_command,
            "kill": self.kill,
        }

    def run(self, argv: list[str]) -> CommandResult | None:
        """Run one Android program; None when this model does not know it."""
        if argv[:1] == ["run-as"]:
            # Not under the lock: the command it runs may take its time (`sleep`), and the
            # programs it calls take the lock themselves.
            return self.run_as(argv[1:])
        if argv[:1] == ["screenrecord"]:
            # It runs until it is stopped: not under the lock, which every other command takes.
            return self.screenrecord(argv[1:])
        handler = self.table.get(argv[0]) if argv else None
        if handler is None:
            return None
        with self.state.lock:
            return handler(argv[1:])

    def run_as(self, args: list[str]) -> CommandResult:
        """``run-as PACKAGE [--user N] COMMAND...``, with the messages of Android's run-as."""
        if args[1:2] == ["--user"]:
            args = [args[0], *args[3:]]
        if not args:
            return CommandResult.of(
                stderr="usage: run-as <package-name> [--user <uid>] <command> [<args>]\n",
                returncode=1,
            )
        package, command = args[0], args[1:]
        with self.state.lock:
            installed = package in self.state.installed
            debuggable = package in self.state.spec.apps
        if not installed:
            return CommandResult.of(stderr=f"run-as: unknown package: {package}\n", returncode=1)
        if not debuggable:
            return CommandResult.of(
                stderr=f"run-as: package not debuggable: {package}\n", returncode=1
            )
        if not command:
            return CommandResult.of(
                stderr="run-as: the fake runs a command, not an interactive shell\n",
                returncode=1,
            )
        with self.state.lock:
            self.state.log("run-as", f"{package}: {' '.join(command)}")
        return self.subcommand(command)

    def input(self, args: list[str]) -> CommandResult:
        usage = CommandResult.of(
            stderr="Error: Unknown command\nUsage: input [<source>] <command> [<arg>...]\n",
            returncode=1,
        )
        if not args:
            return usage
        command, rest = args[0], args[1:]
        try:
            if command == "tap" and len(rest) == 2:
                self.gestures.tap(*(int(float(v)) for v in rest))
            elif command == "swipe" and len(rest) in (4, 5):
                x1, y1, x2, y2 = (int(float(v)) for v in rest[:4])
                duration = int(rest[4]) if len(rest) == 5 else 300
                if abs(x2 - x1) <= 10 and abs(y2 - y1) <= 10:
                    if duration >= 400:
                        self.gestures.long_press(x1, y1)
                    else:
                        self.gestures.tap(x1, y1)
                else:
                    self.gestures.swipe(x1, y1, x2, y2)
            elif command == "text" and len(rest) == 1:
                self.gestures.type_text(rest[0].replace("%s", " "))
            elif command == "keyevent" and rest:
                codes = [_key_code(v) for v in rest if v != "--longpress"]
                for code in codes:
                    self.gestures.press_key(code)
            else:
                return usage
        except ValueError as exc:
            return CommandResult.of(stderr=f"Error: {exc}\n", returncode=1)
        return CommandResult(0)

    def uiautomator(self, args: list[str]) -> CommandResult:
        if not args or args[0] != "dump":
            return CommandResult.of(
                stderr="Usage: uiautomator <subcommand> [options]\n", returncode=1
            )
        paths = [a for a in args[1:] if not a.startswith("--")]
        path = paths[0] if paths else DEFAULT_DUMP_PATH
        if self.state.faults.idle_errors > 0:
            self.state.faults.idle_errors -= 1
            self.state.log("dump-not-idle", path)
            return CommandResult.of(IDLE_ERROR_TEXT)
        xml = (
            self.state.faults.malformed_dumps.pop(0)
            if self.state.faults.malformed_dumps
            else self.view.dump_xml()
        )
        self.state.log("dump", path)
        done = f"UI hierchary dumped to: {path}\n"  # sic: the platform's own spelling
        if path == "/dev/tty":
            return CommandResult.of(xml + done)
        self.state.files.write(path, xml.encode())
        return CommandResult.of(done)

    def am(self, args: list[str]) -> CommandResult:
        if args[:1] == ["force-stop"] and len(args) == 2:
            self.state.stop(args[1])
            return CommandResult(0)
        if args[:1] == ["broadcast"]:
            return self.broadcast(args[1:])
        if args[:1] == ["start"]:
            opts = _options(args[1:])
            if "-n" in opts:
                package = opts["-n"].split("/", 1)[0]
                if package not in self.state.apps:
                    return CommandResult.of(
                        f"Starting: Intent {{ cmp={opts['-n']} }}\n",
                        f"Error: Activity class {{{opts['-n']}}} does not exist.\n",
                        1,
                    )
                self.state.launch(package)
                return CommandResult.of(f"Starting: Intent {{ cmp={opts['-n']} }}\n")
            if opts.get("-a") == "android.intent.action.VIEW" and "-d" in opts:
                self.state.browser_url = opts["-d"]
                self.state.launch(BROWSER_PACKAGE)
                self.state.log("open-url", opts["-d"])
                return CommandResult.of(
                    f"Starting: Intent {{ act=android.intent.action.VIEW dat={opts['-d']} }}\n"
                )
        return CommandResult.of(
            stderr=f"Error: unsupported am command: {shlex.join(args)}\n", returncode=1
        )

    def broadcast(self, args: list[str]) -> CommandResult:
        opts = _options(args)
        action = opts.get("-a", "")
        head = f"Broadcasting: Intent {{ act={action} flg=0x400000 (has extras) }}\n"
        if action == "clipper.set":
            self.state.clipboard = opts.get("--es text", "")
            self.state.log("clipboard", self.state.clipboard)
            return CommandResult.of(
                head + 'Broadcast completed: result=-1, data="Text is copied into clipboard."\n'
            )
        if action == "com.android.systemui.demo":
            command = opts.get("-e command", "")
            if (
                command == "enter"
                and self.state.settings.get(("global", "sysui_demo_allowed")) != "1"
            ):
                return CommandResult.of(head + "Broadcast completed: result=0\n")
            if command in ("enter", "exit"):
                self.state.demo_mode = command == "enter"
                self.state.log("demo-mode", command)
            return CommandResult.of(head + "Broadcast completed: result=0\n")
        if action == "clipper.get":
            return CommandResult.of(
                head + f'Broadcast completed: result=-1, data="{self.state.clipboard}"\n'
            )
        for number_flag, parse in (("--ei", int), ("--el", int), ("--ef", float), ("--ed", float)):
            for key, value in opts.items():
                if key.startswith(number_flag + " "):
                    try:
                        parse(value)
                    except ValueError:
                        return CommandResult.of(
                            stderr="Exception occurred while executing 'broadcast':\n"
                            f'java.lang.NumberFormatException: For input string: "{value}"\n',
                            returncode=255,
                        )
        if action == "android.intent.action.MEDIA_SCANNER_SCAN_FILE":
            self.state.log("media-scan", opts.get("-d", ""))
        else:
            extras = {k: v for k, v in opts.items() if k.startswith("--e")}
            self.state.log("broadcast", f"{action} -> {opts.get('-n', '(any)')} {extras}")
        return CommandResult.of(head + "Broadcast completed: result=0\n")

    def pm(self, args: list[str]) -> CommandResult:
        if args[:2] == ["list", "packages"]:
            names = sorted(self.state.installed)
            if "-3" in args:
                names = [n for n in names if n in self.state.apps or n in self.state.spec.packages]
            if "-f" in args:
                return CommandResult.of("".join(f"package:{_apk(n)}={n}\n" for n in names))
            return CommandResult.of("".join(f"package:{n}\n" for n in names))
        if args[:1] == ["clear"] and len(args) == 2:
            package = args[1]
            if package not in self.state.installed:
                return CommandResult.of("Failed\n", returncode=1)
            self.state.clear_data(package)
            self.state.log("clear", package)
            return CommandResult.of("Success\n")
        if args[:1] == ["path"] and len(args) == 2:
            if args[1] not in self.state.installed:
                return CommandResult(1)
            return CommandResult.of(f"package:/data/app/{args[1]}/base.apk\n")
        if args[:1] in (["grant"], ["revoke"]) and len(args) == 3:
            package, permission = args[1], args[2]
            if package not in self.state.installed:
                return CommandResult.of(
                    stderr=f"Exception occurred while executing '{args[0]}':\n"
                    f"java.lang.IllegalArgumentException: Unknown package: {package}\n",
                    returncode=255,
                )
            if not permission.startswith("android.permission.") and "." not in permission:
                return CommandResult.of(
                    stderr=f"Exception occurred while executing '{args[0]}':\n"
                    f"java.lang.IllegalArgumentException: Unknown permission: {permission}\n",
                    returncode=255,
                )
            if args[0] == "grant":
                self.state.granted.add((package, permission))
            else:
                self.state.granted.discard((package, permission))
            self.state.log(args[0], f"{package} {permission}")
            return CommandResult(0)
        return CommandResult.of(
            stderr=f"Error: unsupported pm command: {shlex.join(args)}\n", returncode=1
        )

    def settings(self, args: list[str]) -> CommandResult:
        if args[:1] == ["put"] and len(args) == 4:
            self.state.settings[(args[1], args[2])] = args[3]
            return CommandResult(0)
        if args[:1] == ["get"] and len(args) == 3:
            return CommandResult.of(self.state.settings.get((args[1], args[2]), "null") + "\n")
        return CommandResult.of("null\n")

    def appops(self, args: list[str]) -> CommandResult:
        if args[:1] == ["set"] and len(args) == 4:
            package, op, mode = args[1:]
            if package not in self.state.installed:
                return CommandResult.of(
                    stderr=f"Error: Unknown package: {package}\n", returncode=255
                )
            if mode not in ("allow", "ignore", "deny", "default", "foreground"):
                return CommandResult.of(stderr=f"Error: Mode {mode} is not valid\n", returncode=255)
            self.state.app_ops[(package, op)] = mode
            self.state.log("appops", f"{package} {op} {mode}")
            return CommandResult(0)
        return CommandResult.of(stderr="Error: unsupported appops command\n", returncode=255)

    def svc(self, args: list[str]) -> CommandResult:
        if len(args) == 2 and args[0] in ("wifi", "data") and args[1] in ("enable", "disable"):
            self.state.network[args[0]] = args[1] == "enable"
            self.state.log("network", f"{args[0]} {args[1]}")
            return CommandResult(0)
        return CommandResult.of(stderr="Error: unsupported svc command\n", returncode=1)

    def screencap(self, args: list[str]) -> CommandResult:
        """``screencap -p FILE`` (or to stdout): a PNG of the screen as it is drawn now."""
        paths = [a for a in args if not a.startswith("-")]
        spec = self.state.spec
        package, screen = self.focus()
        bands = [
            (view.bounds.top, view.bounds.bottom)
            for window in self.view.render()
            for view in window.walk()
            if view.element is not None
        ]
        image = screen_png(spec.width, spec.height, f"{package}/{screen}", bands)
        self.state.log("screencap", paths[0] if paths else "stdout")
        if not paths:
            return CommandResult(0, ((STDOUT, image),))
        self.state.files.write(paths[0], image)
        return CommandResult(0)

    def logcat_command(self, args: list[str]) -> CommandResult:
        code, out, err = self.state.logcat.command(args)
        return CommandResult.of(out, err, code)

    def screenrecord(self, args: list[str]) -> CommandResult:
        """``screenrecord [--time-limit N] FILE``: records until ``kill -2`` or the limit."""
        limit = DEFAULT_TIME_LIMIT
        paths: list[str] = []
        words = iter(args)
        for word in words:
            if word in ("--time-limit", "--bit-rate", "--size"):
                value = next(words, "")
                if word == "--time-limit":
                    try:
                        limit = float(value)
                    except ValueError:
                        return CommandResult.of(stderr="Invalid time limit\n", returncode=2)
            elif not word.startswith("-"):
                paths.append(word)
        if len(paths) != 1:
            return CommandResult.of(stderr="Must specify output file (see --help).\n", returncode=2)
        path = paths[0]
        recording = self.recorder.start(path, limit)
        with self.state.lock:
            self.state.files.write(path, MP4_HEAD)
            self.state.log("screenrecord", f"start {path} pid {recording.pid}")
        seconds = self.recorder.wait(recording)
        with self.state.lock:
            marks = b"".join(b"\x00\x00\x00\x08free" for _ in range(1 + int(seconds)))
            self.state.files.write(path, MP4_HEAD + marks)
            self.state.log("screenrecord", f"stop {path} after {seconds:.1f}s")
        return CommandResult(0)

    def kill(self, args: list[str]) -> CommandResult:
        """``kill [-N|-SIGNAME] PID...`` for the device's own processes (screenrecord)."""
        number = 15
        words = list(args)
        if words and words[0].startswith("-"):
            name = words.pop(0)[1:].upper().removeprefix("SIG")
            signals = {"INT": 2, "TERM": 15, "KILL": 9, "HUP": 1}
            if name.isdigit():
                number = int(name)
            elif name in signals:
                number = signals[name]
            else:
                return CommandResult.of(stderr=f"kill: unknown signal '{name}'\n", returncode=1)
        if not words:
            return CommandResult.of(stderr="kill: usage: kill [-s SIG] PID...\n", returncode=1)
        failed = [w for w in words if not (w.isdigit() and self.recorder.signal(int(w), number))]
        if failed:
            return CommandResult.of(
                stderr="".join(f"kill: {w}: No such process\n" for w in failed), returncode=1
            )
        return CommandResult(0)

    def monkey(self, args: list[str]) -> CommandResult:
        opts = _options(args)
        package = opts.get("-p", "")
        if package not in self.state.apps:
            return CommandResult.of(
                "  bash arg: -p\n", "** No activities found to run, monkey aborted.\n", 252
            )
        self.state.launch(package)
        return CommandResult.of(f"  bash arg: -p\n  bash arg: {package}\nEvents injected: 1\n")

    def dumpsys(self, args: list[str]) -> CommandResult:
        what = args[0] if args else ""
        if what == "input_method":
            shown = flag(self.state.keyboard_shown)
            return CommandResult.of(f"  mInputShown={shown}\n  mShowRequested={shown}\n")
        if what == "window":
            package, activity = self.focus()
            token = f"{abs(hash(package)) % 0xFFFFFFF:07x}"
            return CommandResult.of(
                f"  mCurrentFocus=Window{{{token} u0 {package}/{activity}}}\n"
                f"  mFocusedApp=ActivityRecord{{{token} u0 {package}/{activity} t7}}\n"
            )
        if what == "activity":
            package, activity = self.focus()
            pid = self.state.apps[package].pid if package in self.state.apps else 1200
            return CommandResult.of(
                f"  mResumedActivity: ActivityRecord{{1a2b u0 {package}/{activity} t7}}\n"
                f"  ACTIVITY {package}/{activity} 5c3d pid={pid}\n"
            )
        if what == "display":
            return CommandResult.of("  mCurrentOrientation=0\n  orientation=0\n")
        if what == "package" and len(args) == 2:
            app = self.state.apps.get(args[1])
            stopped = app is None or not app.running
            return CommandResult.of(
                f"Packages:\n  Package [{args[1]}]:\n    stopped={flag(stopped)}\n"
            )
        return CommandResult(0)

    def focus(self) -> tuple[str, str]:
        if self.state.foreground is None:
            return LAUNCHER_PACKAGE, "com.android.launcher3.uioverrides.QuickstepLauncher"
        screen = self.state.screen()
        if screen is None:
            return self.state.foreground, ".BrowserActivity"
        return self.state.foreground, screen.activity

    def wm(self, args: list[str]) -> CommandResult:
        if args[:1] == ["size"]:
            return CommandResult.of(
                f"Physical size: {self.state.spec.width}x{self.state.spec.height}\n"
            )
        if args[:1] == ["density"]:
            return CommandResult.of("Physical density: 420\n")
        return CommandResult.of(stderr="Error: unsupported wm command\n", returncode=1)

    def properties(self) -> dict[str, str]:
        return {
            "ro.build.version.sdk": str(self.state.spec.sdk),
            "ro.build.version.release": str(max(1, self.state.spec.sdk - 20)),
            "ro.product.model": self.state.spec.model,
            "ro.product.name": self.state.spec.model,
            "ro.product.device": self.state.spec.model,
            "ro.serialno": self.state.spec.serial,
            **self.state.spec.properties,
        }

    def getprop(self, args: list[str]) -> CommandResult:
        props = self.properties()
        if args:
            return CommandResult.of(props.get(args[0], "") + "\n")
        return CommandResult.of("".join(f"[{k}]: [{v}]\n" for k, v in sorted(props.items())))

    def pidof(self, args: list[str]) -> CommandResult:
        if args == ["screenrecord"]:
            pids = self.recorder.pids()
            return CommandResult.of(" ".join(map(str, pids)) + "\n") if pids else CommandResult(1)
        app = self.state.apps.get(args[0]) if args else None
        if app is None or not app.running:
            return CommandResult(1)
        return CommandResult.of(f"{app.pid}\n")


def _apk(package: str) -> str:
    return f"/data/app/{package}/base.apk"


def _key_code(value: str) -> int:
    if value.isdigit():
        return int(value)
    name = value.removeprefix("KEYCODE_")
    if name not in KEY_NAMES:
        raise ValueError(f"unknown keycode {value}")
    return KEY_NAMES[name]


_EXTRA_FLAGS = frozenset({"--es", "--ei", "--ez", "--el", "--ef", "--ed", "--eu", "-e"})


def _options(args: Sequence[str]) -> dict[str, str]:
    """``-a X -d Y --es key value`` -> {"-a": X, "-d": Y, "--es key": value}."""
    opts: dict[str, str] = {}
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in _EXTRA_FLAGS and i + 2 < len(args):
            opts[f"{arg} {args[i + 1]}"] = args[i + 2]
            i += 3
        elif arg.startswith("-") and i + 1 < len(args):
            opts[arg] = args[i + 1]
            i += 2
        else:
            i += 1
    return opts
