"""The report of `orderbot eval`: one row per case, and the totals under it.

A view like orderbot.ui.render's: it reads a finished report and decides nothing."""

from __future__ import annotations

from pathlib import Path

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from orderbot.errors import Phrase
from orderbot.i18n import say
from orderbot.i18n import t as _t
from orderbot.ui.escape import visible
from orderbot.ui.layout import flow_dots
from orderbot.ui.presentation import model_label
from orderbot.ui.styles import STYLE_DIM, STYLE_ERROR, STYLE_OK

EVAL_ONE_LINE = 160  # columns: narrower, each case takes a few lines so its calls and failures stay readable


def format_eval(report, *, plain: bool = False, width: int | None = None) -> Table:
    """One row per case of an eval report (orderbot.answers.evaluate.Report): on one line
    at EVAL_ONE_LINE columns and wider; narrower, the result with its time and tokens
    beside the case with its stop reason, each call on a line and why it failed."""
    table = Table(box=box.SIMPLE if plain else box.ROUNDED, show_edge=not plain, header_style="" if plain else "bold")
    if width is not None and width < EVAL_ONE_LINE:
        return _stacked_eval(table, report)
    table.add_column(_t("eval.case"), no_wrap=True)
    table.add_column(_t("eval.result"), no_wrap=True)
    table.add_column(_t("eval.stop"), no_wrap=True)
    table.add_column(_t("eval.calls"), overflow="fold", ratio=1)
    table.add_column(_t("eval.seconds"), justify="right", no_wrap=True)
    table.add_column(_t("eval.tokens"), justify="right", no_wrap=True)
    table.add_column(_t("eval.why"), overflow="fold", ratio=1)
    for result in report.results:
        table.add_row(
            Text(visible(result.name, one_line=True)),
            _eval_verdict(result),
            result.stop_reason or "-",
            Text(visible("; ".join(result.calls) or "-", one_line=True)),  # model-made text: never markup
            f"{result.seconds:.2f}",
            str(result.tokens),
            Text(visible(_eval_why(result), one_line=True)),
        )
    return table


def _eval_verdict(result) -> Text:
    return Text(_t("eval.pass"), style=STYLE_OK) if result.passed else Text(_t("eval.fail"), style=STYLE_ERROR)


def _eval_why(result) -> str:
    if result.error is not None:
        return say(result.error)
    failed = [
        _t("eval.why_check", check=_t(f"eval.check.{c.name}"), detail=check_detail(c))
        for c in result.checks
        if not c.ok
    ]
    return _t("eval.reason_separator").join(failed)


def check_detail(check, lang: str | None = None) -> str:
    """Why a check failed (orderbot.answers.evaluate.Check), in the UI language (or `lang`): each
    reason said, a list of values (facts, codes) joined with the language's own separator."""
    joined = _t("eval.list_separator", lang)

    def said(reason) -> str:
        values = {k: joined.join(v) if isinstance(v, list | tuple) else v for k, v in reason.params.items()}
        return say(Phrase(reason.id, values), lang)

    return _t("eval.reason_separator", lang).join(said(reason) for reason in check.reasons)


def _stacked_eval(table: Table, report) -> Table:
    table.show_lines = True  # a case takes several lines: a rule between cases
    table.add_column(f"{_t('eval.result')}\n{_t('eval.seconds')}\n{_t('eval.tokens')}", no_wrap=True)
    table.add_column(f"{_t('eval.case')} · {_t('eval.stop')}\n{_t('eval.calls')}\n{_t('eval.why')}", ratio=1)
    for result in report.results:
        verdict = Text("\n").join([_eval_verdict(result), Text(f"{result.seconds:.2f}"), Text(str(result.tokens))])
        lines = [Text(f"{visible(result.name, one_line=True)} · {result.stop_reason or '-'}")]
        lines += [Text(visible(call, one_line=True), style=STYLE_DIM) for call in result.calls]
        why = _eval_why(result)
        if why:
            lines.append(Text(visible(why, one_line=True), style=STYLE_ERROR))
        table.add_row(verdict, Text("\n").join(lines))
    return table


def format_eval_totals(report) -> str:
    totals = report.totals()
    text = _t(
        "eval.totals",
        passed=totals["passed"],
        cases=totals["cases"],
        rate=f"{totals['pass_rate']:g}",
        needed=f"{totals['min_pass']:g}",
        median_s=f"{totals['median_seconds']:.2f}",
        worst_s=f"{totals['worst_seconds']:.2f}",
        median_tokens=f"{totals['median_tokens']:g}",
        worst_tokens=totals["worst_tokens"],
    )
    return text if totals["orders_unchanged"] else text + _t("eval.orders_changed")


def print_eval(console: Console, report) -> None:
    suite, orders = Path(report.suite).name, Path(report.orders).name  # --json has the whole paths
    header = _t("eval.header", suite=suite, model=model_label(report.provider, report.model), orders=orders)
    console.print(flow_dots(console, header, STYLE_DIM), soft_wrap=True)
    console.print(format_eval(report, plain=not console.is_terminal, width=console.width))
    console.print(
        flow_dots(console, format_eval_totals(report), STYLE_OK if report.ok else STYLE_ERROR), soft_wrap=True
    )
