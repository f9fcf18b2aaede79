"""The command line: a thin Typer app. Each command lives in orderbot/commands/.

Only typer is imported here. A command's module is imported when that command runs (or
its own help is asked for): `command(name)` is the one place that does it, and the list of
commands in `orderbot --help` comes from orderbot.commands.COMMAND_HELP, so `--help` imports
no command and never the openai SDK.

Conventions kept here for every command: `orderbot` alone prints help and exits 0; `-V` is
`--version`; NO_COLOR=1 means no colour or style anywhere, help included; flags show no
`<bool>` as if they took a value; a closed pipe (`orderbot ask ... | head -1`) ends quietly
with exit code 141 (128 + SIGPIPE, as a shell reports for any program the pipe stopped),
never 1, which `replay` uses for "differs".
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import gc
import io
import os
import sys
from difflib import SequenceMatcher

import typer
from typer.core import TyperCommand, TyperGroup

from orderbot import __version__, i18n
from orderbot.commands import COMMAND_HELP, CommandGroup, logs
from orderbot.errors import ExitCode, UsageError
from orderbot.text import cut, validation_phrase
from orderbot.ui.escape import visible
from orderbot.ui.terminal import WholeWrites, end_quietly_on_closed_pipe


def command_app(name: str) -> typer.Typer | None:
    """The Typer app of the command called `name`, its module imported now: the one lazy
    boundary, so that `orderbot --help` and each command load only what they use."""
    match name:
        case "ask":
            from orderbot.commands import ask as module
        case "repl":
            from orderbot.commands import repl as module
        case "runs":
            from orderbot.commands import runs as module
        case "resume":
            from orderbot.commands import resume as module
        case "replay":
            from orderbot.commands import replay as module
        case "approvals":
            from orderbot.commands import approvals as module
        case "audit":
            from orderbot.commands import audit as module
        case "orders":
            from orderbot.commands import orders as module
        case "eval":
            from orderbot.commands import evaluation as module
        case "models":
            from orderbot.commands import models as module
        case "keys":
            from orderbot.commands import keys as module
        case "doctor":
            from orderbot.commands import doctor as module
        case "mcp":
            from orderbot.commands import mcp as module
        case _:
            return None
    return module.app


@functools.cache
def command(name: str) -> TyperCommand | TyperGroup | None:
    """The command called `name`, built once."""
    app = command_app(name)
    if app is None:
        return None
    built = typer.main.get_command(app)
    built.name = name
    flags_take_no_value(built)
    speaks_the_ui_language(built)
    return built


class HelpFormatter(typer.Context.formatter_class):
    """Click's help formatter with the usage line in the UI language (`用法：orderbot ask
    [选项] …`), as Typer prints the rest of the help."""

    def write_usage(self, prog: str, args: str = "", prefix: str | None = None) -> None:
        for word in ("OPTIONS", "COMMAND", "ARGS"):  # Click's placeholders
            args = args.replace(word, i18n.t(f"usage.{word.lower()}"))
        super().write_usage(prog, args, i18n.t("usage.prefix") if prefix is None else prefix)


class Context(typer.Context):
    """Every command's context (Click's `context_class`): its help uses HelpFormatter, and
    under NO_COLOR it has no style at all."""

    formatter_class = HelpFormatter

    def get_help(self) -> str:
        """The help, as Click asks for it to print. Typer's renderer prints it itself, through a
        Rich console of its own, where Rich's NO_COLOR drops colours but keeps bold and dim:
        under NO_COLOR it is drawn into a buffer instead and handed on as plain text."""
        if not os.environ.get("NO_COLOR", ""):
            return super().get_help()
        from rich.text import Text  # lazily, as Typer itself: help and errors only

        with contextlib.redirect_stdout(io.StringIO()) as drawn:
            rest = super().get_help()
        shown = drawn.getvalue()
        return Text.from_ansi(shown).plain.rstrip("\n") + "\n" * shown.endswith("\n") + rest


def speaks_the_ui_language(built: TyperCommand | TyperGroup) -> None:
    built.context_class = Context
    for sub in getattr(built, "commands", {}).values():
        speaks_the_ui_language(sub)


HELP_OPTIONS = ["-h", "--help"]


def flags_take_no_value(built: TyperCommand | TyperGroup) -> None:
    """Typer labels every option with its type in the help, flags included (`--json
    <bool>`), as if a flag took a value. An empty metavar (Click's public name for that
    label) shows none; an option that takes a value keeps its type. The help option is
    made now, as the command would make it (and keep it) when asked (`get_help_option`)."""
    helper = built.get_help_option(typer.Context(built, help_option_names=HELP_OPTIONS))
    for param in [*built.params, *([helper] if helper is not None else [])]:
        if getattr(param, "is_flag", False) and param.metavar is None:
            param.metavar = ""
    for sub in getattr(built, "commands", {}).values():
        flags_take_no_value(sub)


class LazyGroup(CommandGroup):
    """The root command: lists the commands from their help table, loads one only to run it.
    A usage error (a flag, an argument, a command, or one orderbot finds itself) is one
    line in the UI language with a hint to the command's help, and suggests only a flag
    close to what was typed."""

    listing = False  # while the root's own help is drawn: a name and a line are enough
    context_class = Context

    def main(self, *args, **kwargs):
        """The root command's main, however it is started (cli.main, a test's CliRunner):
        log lines are held from here on (orderbot.commands.logs), set up by the command
        line that runs and never by importing a module."""
        logs.hold_lines()
        return super().main(*args, **kwargs)

    def parse_args(self, ctx, args: list[str]) -> list[str]:
        return super().parse_args(ctx, lang_first(args))

    def make_context(self, info_name, args, parent=None, **extra):
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except (typer.TyperException, UsageError) as exc:
            _language_of(lang_first(args))  # the parse stopped before --lang was read: read it now
            raise usage_error(exc, info_name or "orderbot") from None

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except (typer.TyperException, UsageError) as exc:  # Click's, Typer's and orderbot's own
            raise usage_error(exc, f"{ctx.command_path} {ctx.invoked_subcommand or ''}".strip()) from None

    def list_commands(self, ctx) -> list[str]:
        return list(COMMAND_HELP)

    def get_command(self, ctx, name: str) -> TyperCommand | TyperGroup | None:
        if self.listing and name in COMMAND_HELP:
            return TyperCommand(name, help=COMMAND_HELP[name])
        return command(name)

    def format_help(self, ctx, formatter) -> None:
        flags_take_no_value(self)  # the root's own flags, Typer's completion flags among them
        LazyGroup.listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            LazyGroup.listing = False


def _language_of(args: list[str]) -> None:
    """The UI language for an error found while the root's flags were parsed (`orderbot
    --lang zh --bogus`), from a leading --lang; a bad one leaves the language as it is."""
    value = args[1] if args[:1] == ["--lang"] and len(args) > 1 else None
    if args and args[0].startswith("--lang="):
        value = args[0].removeprefix("--lang=")
    with contextlib.suppress(ValueError):
        i18n.set_language(i18n.language_from(_language_environment()[0], value))


def lang_first(args: list[str]) -> list[str]:
    """`orderbot ask --lang zh …` read as `orderbot --lang zh ask …`: the language is the
    root's option, and people put it after the command as often as before (never past `--`)."""
    end = args.index("--") if "--" in args else len(args)
    for index, arg in enumerate(args[:end]):
        if arg.startswith("--lang="):
            return [arg, *args[:index], *args[index + 1 :]]
        if arg == "--lang" and index + 1 < end:
            return [arg, args[index + 1], *args[:index], *args[index + 2 :]]
    return args


CLOSE_ENOUGH = 0.8  # how alike a mistyped flag and a real one must be for the one to be suggested


def usage_error(exc: typer.TyperException | UsageError, path: str) -> typer.TyperException:
    """A usage error said as every error is: one line on stderr, `orderbot: …`, in the UI
    language, with a hint to the help of `path` (the command it was typed for), then exit 2;
    no far-fetched suggestion (`ask --bogus` is not `--user`). Click's usage errors are told
    apart by what they carry (Typer exports none of their classes but BadParameter); any
    other error of Typer's (exit code not 2) passes unchanged. What the line quotes was typed
    (a flag, a command name): it is shown escaped and bounded."""
    if isinstance(exc, UsageError):
        text = i18n.say(exc)
    elif exc.exit_code != ExitCode.USAGE or type(exc).__name__ == "NoArgsIsHelpError":
        return exc
    else:
        path = exc.ctx.command_path if exc.ctx is not None else path
        text = _message(exc, path) or exc.format_message()
    said = i18n.t("usage.line", error=text.rstrip(".。"), command=path)
    print(i18n.t("error.prefix", error=cut(visible(said, one_line=True), MAX_USAGE_LINE)), file=sys.stderr)
    return typer.Exit(ExitCode.USAGE)


MAX_USAGE_LINE = 2000  # characters, as for every error line (orderbot.commands.common.error_line)


def _message(exc: typer.TyperException, path: str) -> str | None:
    """The sentence of a usage error Click and Typer raise, rebuilt from what it carries (the
    option it names, the parameter, pydantic's structured error behind a bad value); one
    carrying nothing to rebuild it from is said behind orderbot's own sentence, its words
    as they are."""
    if hasattr(exc, "possibilities"):  # no such option
        close = [
            p for p in exc.possibilities or () if SequenceMatcher(None, exc.option_name, p).ratio() >= CLOSE_ENOUGH
        ]
        text = i18n.t("usage.no_such_option", name=exc.option_name)
        return text + i18n.t("usage.did_you_mean", options=", ".join(sorted(close))) if close else text
    hint = exc.param_hint if getattr(exc, "param_hint", None) is not None else None
    if hint is None and getattr(exc, "param", None) is not None:
        hint = exc.param.get_error_hint()
    if isinstance(hint, list | tuple):
        hint = " / ".join(hint)
    if hasattr(exc, "param_type"):  # a missing argument or option
        kind = exc.param_type or (exc.param.param_type_name if exc.param is not None else "parameter")
        return i18n.t("usage.missing", kind=i18n.t(f"usage.kind_{kind}") if kind in PARAM_KINDS else kind, name=hint)
    if isinstance(exc, typer.BadParameter) and hint:
        cause = exc.__cause__
        errors = cause.errors(include_url=False, include_input=False) if hasattr(cause, "errors") else None
        why = validation_phrase(errors[0]) if errors else exc.message  # pydantic's error, else the words given
        return i18n.t("usage.bad_value", name=hint, why=why)
    option = getattr(exc, "option_name", None)  # an option given with a value it takes none of, or without one
    if option is not None:
        return i18n.t("usage.takes_no_value" if _is_flag(option, path) else "usage.needs_value", name=option)
    return i18n.t("usage.click", error=exc.format_message().rstrip("."))


def _is_flag(option: str, path: str) -> bool:
    """Whether `option` takes no value, as the command `path` (`orderbot runs`) and its
    subcommands define it: the parser that refused it says which command it parsed for no
    more than that."""
    found = command(path.split()[1]) if len(path.split()) > 1 else None
    commands = [found] if found is not None else []
    params = []
    while commands:
        current = commands.pop()
        params += [p for p in current.params if option in getattr(p, "opts", ())]
        commands += list(getattr(current, "commands", {}).values())
    return bool(params) and all(getattr(p, "is_flag", False) or getattr(p, "count", False) for p in params)


PARAM_KINDS = ("argument", "option", "parameter")


EPILOG = (
    'Examples: orderbot ask "查询 ORD-1001" · orderbot repl --user C001 · orderbot runs · '
    "orderbot resume last --approve · orderbot doctor --ping"
)


app = typer.Typer(
    name="orderbot",
    cls=LazyGroup,
    help="Ask about orders from the terminal. A language model proposes each step; orderbot owns the loop "
    "and its limits.",
    epilog=EPILOG,
    no_args_is_help=False,
    add_completion=True,
    rich_markup_mode="rich",
    context_settings={"help_option_names": HELP_OPTIONS},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"orderbot {__version__}")  # untranslated: a name and a number
        raise typer.Exit()


def _language(value: str | None) -> str | None:
    """--lang, else ORDERBOT_LANG (the environment, then ./.env, as every setting), else the
    locale: fixed before any command prints a word. A bad --lang is a usage error (exit 2);
    a bad ORDERBOT_LANG is a setting, checked like one: one sentence in English (the
    language it failed to name) naming where it came from, and exit 6. Either value is
    shown escaped: it may hold terminal escapes."""
    environ, source = _language_environment()
    try:
        i18n.set_language(i18n.language_from(environ, value))
    except ValueError as exc:
        shown = cut(visible(str(exc), one_line=True), 40)
        i18n.set_language(i18n.DEFAULT)
        if value:
            raise UsageError(i18n.t("error.bad_lang", value=shown, source="--lang")) from None
        message = i18n.t("error.bad_lang", value=shown, source=i18n.t(source, name="ORDERBOT_LANG"))
        print(i18n.t("error.prefix", error=message), file=sys.stderr)
        raise typer.Exit(ExitCode.CONFIG) from None
    return value


def _language_environment() -> tuple[dict[str, str], str]:
    """The variables the language is chosen from, with ORDERBOT_LANG from ./.env when the
    environment has none, and the message id saying where ORDERBOT_LANG came from. The
    .env file is read only when there is one (python-dotenv is imported for it alone)."""
    environ = dict(os.environ)
    if environ.get("ORDERBOT_LANG", "").strip() or not os.path.isfile(".env"):
        return environ, "settings.in_environment"
    from dotenv import dotenv_values  # lazily: most runs have no .env, and `--help` needs none

    try:
        from_file = (dotenv_values(".env").get("ORDERBOT_LANG") or "").strip()
    except (OSError, UnicodeDecodeError):  # the settings say so, in one sentence, when they load it
        from_file = ""
    if from_file:
        environ["ORDERBOT_LANG"] = from_file
    return environ, "settings.in_dotenv"


@app.callback(invoke_without_command=True)
def root(
    ctx: typer.Context,
    version: bool = typer.Option(
        False, "--version", "-V", help="Show the version and exit.", callback=_version, is_eager=True
    ),
    lang: str | None = typer.Option(
        None,
        "--lang",
        help="Language of what orderbot prints: zh or en \\[default: $ORDERBOT_LANG, else the locale "
        "(LC_ALL, LC_MESSAGES, LANG), else en]. --json, stop reasons and exit codes do not change.",
        callback=_language,
        is_eager=True,
        show_default=False,
    ),
) -> None:
    """Ask about orders from the terminal. A language model proposes each step; orderbot owns the loop."""
    if ctx.invoked_subcommand is None:  # `orderbot` alone: the help, and no error
        typer.echo(ctx.get_help())
        raise typer.Exit(0)


def main() -> None:
    if not isinstance(sys.stdout, WholeWrites):
        sys.stdout = WholeWrites(sys.stdout)  # a closed pipe is noticed whatever the size of a write
    # At exit Python's last collections walk, and free one by one, every class and function the
    # imports made: the openai SDK's thousands of pydantic models cost 0.1-0.2 s of every run
    # that used it, for a process that is ending anyway. Frozen, they are left to the system;
    # files, the run store and the logs are closed before then, as they always are. At exit
    # only, so a program that calls main() (a test) keeps its collector; registered once.
    atexit.unregister(gc.freeze)
    atexit.register(gc.freeze)
    try:
        app(prog_name="orderbot")  # whatever started it (python -m orderbot, a fork in a test)
    finally:
        _flush_or_end_quietly()


def _flush_or_end_quietly() -> None:
    """What is left in stdout's buffer is written at exit; when the reader has gone (`| head
    -1`), say nothing about it and exit 141 instead of Python's BrokenPipeError message."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        end_quietly_on_closed_pipe()
