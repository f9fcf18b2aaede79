"""The REPL refuses a line over ask's question limit, without sending it
to the model or echoing it."""

from __future__ import annotations

from clikit import cli

from orderbot.models.scripted import ScriptedModel, text


def test_a_huge_repl_line_is_refused_and_never_sent(use_model):
    model = ScriptedModel([text("好")])
    use_model(model)
    line = "查" * 100_000
    result = cli("repl", "--provider", "scripted", input=line + "\n查询 ORD-1001\n")
    assert result.exit_code == 0, result.output
    assert model.requests and all(len(str(r.items)) < 10_000 for r in model.requests)
    assert len(model.requests) == 1  # only the second, normal line
    assert "4,000" in result.output  # the limit is named (the test runner echoes typed input itself)
