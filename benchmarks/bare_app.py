"""Generate a bare Typer app with orderbot's commands and options but no logic of orderbot's.

    python benchmarks/bare_app.py OUT.py [--job]

It is the baseline of the cold-start figures: what any Typer CLI with the same commands,
options and help texts costs to start. It is generated from orderbot's own Typer and
settings declarations each time the benchmark runs, so it never drifts from the real CLI.

Without --job every command does nothing once Typer has parsed its options (the `--help`
figure's baseline; `ask` then measures Typer's parsing alone). With --job the app is the
fair cold-start floor of `orderbot ask`: what any Typer + Rich + pydantic program that does
this job must pay before its own logic, and nothing more. It has the root's options and
`ask` only (orderbot builds only the command it runs, the others' modules are never
loaded, and with every command registered Typer would build them all: ~30 ms more), and
its `ask` does the job: Typer parses ask's options, one pydantic-settings model with the
fields, types, defaults, environment names and `.env` of orderbot's `Settings` is built from
them (none of orderbot's validators), and one Rich table of the question and every setting
not at its default is printed. Like orderbot, it imports pydantic-settings and Rich's table
only when `ask` runs; its `ask --help` is the bare app's.
"""

from __future__ import annotations

import inspect
import sys
import types
import typing
from pathlib import Path

import typer
from pydantic import AliasChoices, SecretStr
from typer.models import ArgumentInfo, DefaultPlaceholder, OptionInfo
from typer.utils import get_params_from_function

# Keyword arguments of typer.Option/Argument that change what --help shows.
SHOWN = ("help", "show_default", "show_envvar", "envvar", "hidden", "rich_help_panel", "metavar", "is_eager")


def _v(value: object) -> object:
    """Typer wraps unset settings in DefaultPlaceholder; the generated app gets the value."""
    return value.value if isinstance(value, DefaultPlaceholder) else value


def _type(annotation: object) -> str:
    if isinstance(annotation, type):
        if issubclass(annotation, (str, int, float, bool)) and annotation.__module__ == "builtins":
            return annotation.__name__
        if annotation is Path or issubclass(annotation, Path):
            return "pathlib.Path"
        return "str"  # enums and other custom types: the help text is what matters here
    return str(annotation).replace("pathlib.PosixPath", "pathlib.Path")


def _param(name: str, meta) -> str:
    if isinstance(meta.annotation, type) and issubclass(meta.annotation, typer.Context):
        return f"{name}: typer.Context"  # Typer passes the context: not a command-line argument
    info = meta.default
    annotation = _type(meta.annotation)
    if not isinstance(info, (OptionInfo, ArgumentInfo)):
        return f"{name}: {annotation} = {info!r}" if info is not inspect.Parameter.empty else f"{name}: {annotation}"
    default = (
        "..."
        if info.default is ...
        else repr(info.default if isinstance(info.default, (str, int, float, bool)) else None)
    )
    args = [default]
    if isinstance(info, OptionInfo):
        args += [repr(d) for d in info.param_decls or ()]
    kwargs = [f"{key}={_v(getattr(info, key))!r}" for key in SHOWN if _v(getattr(info, key, None)) is not None]
    kind = "Option" if isinstance(info, OptionInfo) else "Argument"
    return f"{name}: {annotation} = typer.{kind}({', '.join(args + kwargs)})"


def _function(name: str, callback, doc: str | None, body: list[str] = ()) -> list[str]:
    params = get_params_from_function(callback) if callback else {}
    lines = [f"def {name}(", *(f"    {_param(n, m)}," for n, m in params.items()), ") -> None:"]
    lines.append(f"    {(doc if doc is not None else inspect.getdoc(callback) if callback else '') or ''!r}")
    return lines + [f"    {line}" if line else "" for line in body]


def _source_type(annotation: object) -> str:
    """A settings field's type as source: builtins, Path, SecretStr and their `| None`."""
    args = typing.get_args(annotation)
    if args and typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return " | ".join(_source_type(arg) for arg in args)
    if annotation is type(None):
        return "None"
    if annotation is SecretStr:
        return "pydantic.SecretStr"
    if isinstance(annotation, type) and issubclass(annotation, Path):
        return "pathlib.Path"
    if isinstance(annotation, type) and annotation.__module__ == "builtins":
        return annotation.__name__
    raise ValueError(f"no source for the settings type {annotation!r}: teach bare_app._source_type it")


def settings_job() -> list[str]:
    """The fair floor's `ask` body (its parameters are its locals when it starts): orderbot's
    settings fields as one pydantic-settings model, built from the options given (over the
    environment and .env), and one Rich table printed: the question and every setting that
    is not at its default."""
    from orderbot.settings import Settings

    config = {key: Settings.model_config[key] for key in ("env_prefix", "env_file", "env_file_encoding", "extra")}
    config |= {key: Settings.model_config[key] for key in ("populate_by_name", "env_ignore_empty")}
    fields = []
    for name, field in Settings.model_fields.items():
        alias = field.validation_alias
        default = repr(field.default)
        if isinstance(alias, AliasChoices):
            names = ", ".join(map(repr, alias.choices))
            default = f"pydantic.Field({default}, validation_alias=pydantic.AliasChoices({names}))"
        fields.append(f"    {name}: {_source_type(field.annotation)} = {default}")
    return [
        "given = {name: value for name, value in locals().items() if value is not None and value is not False}",
        "import pydantic",  # as orderbot: loaded when the command runs, not for --help
        "import pydantic_settings",
        "from rich.console import Console",
        "from rich.table import Table",
        "",
        "class Settings(pydantic_settings.BaseSettings):",
        f"    model_config = pydantic_settings.SettingsConfigDict(**{config!r})",
        *fields,
        "",
        "settings = Settings(**{name: value for name, value in given.items() if name in Settings.model_fields})",
        'table = Table("setting", "value", title="orderbot ask")',
        'table.add_row("question", given.get("question", ""))',
        "for name, field in Settings.model_fields.items():",
        "    if getattr(settings, name) != field.default:",
        "        table.add_row(name, str(getattr(settings, name)))",
        "Console().print(table)",
    ]


def _typer(var: str, app: typer.Typer, out: list[str], counter: list[int], bodies: dict[str, list[str]]) -> None:
    info = app.registered_callback
    if info is not None:
        out.append(f"@{var}.callback(invoke_without_command={_v(info.invoke_without_command)!r})")
        out.extend(_function(f"callback_{counter[0]}", info.callback, _v(info.help)))
        out.append("")
    for command in app.registered_commands:
        counter[0] += 1
        name = command.name or command.callback.__name__.replace("_", "-")
        out.append(
            f"@{var}.command({name!r}, help={_v(command.help)!r}, epilog={_v(command.epilog)!r}, "
            f"hidden={_v(command.hidden)!r}, no_args_is_help={_v(command.no_args_is_help)!r})"
        )
        out.extend(_function(f"command_{counter[0]}", command.callback, _v(command.help), bodies.get(name, ())))
        out.append("")
    for group in app.registered_groups:
        counter[0] += 1
        sub, child = f"group_{counter[0]}", group.typer_instance
        help_text = _v(group.help) or _v(child.info.help)
        no_args = bool(_v(group.no_args_is_help) or _v(child.info.no_args_is_help))
        out.append(f"{sub} = typer.Typer(help={help_text!r}, no_args_is_help={no_args!r})")
        out.append(f"{var}.add_typer({sub}, name={_v(group.name) or _v(child.info.name)!r})")
        _typer(sub, child, out, counter, bodies)


def generate(*, job: bool = False) -> str:
    """The app's source; with `job`, `ask` does the fair floor's work (the module's docstring)."""
    from orderbot.cli import app, command_app
    from orderbot.commands import COMMAND_HELP

    info = app.info
    out = [
        '"""Generated by benchmarks/bare_app.py: orderbot\'s commands and options, no logic."""',
        "import pathlib",
        "import typing",
        "from typing import Optional",
        "",
        "import typer",
        "",
        f"app = typer.Typer(name={_v(info.name)!r}, help={_v(info.help)!r}, "
        f"no_args_is_help={_v(info.no_args_is_help)!r}, add_completion={app._add_completion!r}, "
        f"rich_markup_mode={_v(app.rich_markup_mode)!r}, context_settings={_v(info.context_settings)!r})",
        "",
    ]
    counter = [0]
    bodies = {"ask": settings_job()} if job else {}
    _typer("app", app, out, counter, bodies)
    # orderbot loads a command's module when it runs; the bare app registers them all up front,
    # the fair floor only the one it runs.
    for name in ["ask"] if job else COMMAND_HELP:
        child = command_app(name)
        if child.registered_callback is None and len(child.registered_commands) == 1:
            _typer("app", child, out, counter, bodies)
            continue
        counter[0] += 1
        sub = f"group_{counter[0]}"
        no_args = bool(_v(child.info.no_args_is_help))
        out.append(f"{sub} = typer.Typer(help={_v(child.info.help)!r}, no_args_is_help={no_args!r})")
        out.append(f"app.add_typer({sub}, name={name!r})")
        _typer(sub, child, out, counter, bodies)
    out += ["", 'if __name__ == "__main__":', '    app(prog_name="orderbot")', ""]
    return "\n".join(out)


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3) or sys.argv[2:] not in ([], ["--job"]):
        sys.exit("usage: bare_app.py OUT.py [--job]")
    Path(sys.argv[1]).write_text(generate(job="--job" in sys.argv), encoding="utf-8")
