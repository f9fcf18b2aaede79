"""Every sentence orderbot prints for a person, in English and Chinese (see orderbot/i18n/).

One entry per message id, both languages side by side, so a new message cannot be added
in one language only (tests/ui/test_i18n.py checks both exist with the same placeholders).
Ids are grouped by where they are shown: `stop.*`, `outcome.*`, `table.*`, `approve.*`,
`repl.*`, `runs.*`, `doctor.*`, `error.*`, `status.*`.

Names that are also values (stop reasons such as `step_limit`, flags, commands, JSON keys)
stay as they are in both languages: people copy them into commands and scripts.
"""

from __future__ import annotations

MESSAGES: dict[str, dict[str, str]] = {
    # ---- why a run stopped (the sentence before the detail) -------------------------------
    "stop.step_limit": {"en": "Stopped: the step limit was reached.", "zh": "已停止：达到了步数上限。"},
    "stop.time_limit": {"en": "Stopped: the time limit was reached.", "zh": "已停止：达到了时间上限。"},
    "stop.tool_call_limit": {
        "en": "Stopped: the tool-call limit was reached.",
        "zh": "已停止：达到了工具调用次数上限。",
    },
    "stop.response_too_large": {
        "en": "Stopped: the model's response was too large.",
        "zh": "已停止：模型的回复太长。",
    },
    "stop.response_truncated": {
        "en": "Stopped: the model's response was cut off.",
        "zh": "已停止：模型的回复被截断了。",
    },
    "stop.awaiting_approval": {
        "en": "Paused: an action is waiting for your approval.",
        "zh": "已暂停：有一个操作等待你的确认。",
    },
    "stop.awaiting_another": {
        "en": "Paused: another operator must approve this action.",
        "zh": "已暂停：这个操作需要另一位操作员批准。",
    },
    "stop.model_error": {"en": "Stopped: the model service failed.", "zh": "已停止：模型服务出错。"},
    "stop.transferred": {"en": "Handed over to a person.", "zh": "已转交人工客服。"},
    "stop.cancelled": {"en": "Cancelled.", "zh": "已取消。"},
    # ---- the detail of a stop, after the sentence above: a clause, no capital, no full stop.
    # The English text is also the stop_detail of --json and the run record (orderbot.loop.budget).
    "detail.step_limit_one": {
        "en": "the model asked for {names} at step {step} of {max_steps}; the call was not executed",
        "zh": "模型在第 {step} 步（共 {max_steps} 步）请求调用 {names}；这个调用没有执行",
    },
    "detail.step_limit": {
        "en": "the model asked for {names} at step {step} of {max_steps}; the {count} calls were not executed",
        "zh": "模型在第 {step} 步（共 {max_steps} 步）请求调用 {names}；这 {count} 个调用没有执行",
    },
    "detail.calls_per_step": {
        "en": "the model asked for {count} tool calls in one step, over the cap of {cap}; none were executed",
        "zh": "模型在一步中请求了 {count} 个工具调用，超过了每步 {cap} 个的上限；一个都没有执行",
    },
    "detail.tool_calls": {
        "en": "{count} more tool calls would pass the run's cap of {cap} ({used} used); none were executed",
        "zh": "再执行 {count} 个工具调用会超过本次运行 {cap} 个的上限（已用 {used} 个）；一个都没有执行",
    },
    "detail.time_before_request": {
        "en": "the {seconds:g} s time limit passed before the next request",
        "zh": "在下一次请求之前，{seconds:g} 秒的时间上限已到",
    },
    "detail.time_during_tools": {
        "en": "the {seconds:g} s time limit passed during tool calls",
        "zh": "执行工具调用期间，{seconds:g} 秒的时间上限已到",
    },
    "detail.model_timeout": {
        "en": "the model did not answer within the {seconds:g} s time limit",
        "zh": "模型没有在 {seconds:g} 秒的时间上限内回答",
    },
    "detail.model_timeout_cause": {
        "en": "the model did not answer within the {seconds:g} s time limit (last error: {cause})",
        "zh": "模型没有在 {seconds:g} 秒的时间上限内回答（最后一次错误：{cause}）",
    },
    "detail.response_too_large": {
        "en": "the model's response had {size:,} characters, over the {cap:,} cap",
        "zh": "模型的回复有 {size:,} 个字符，超过了 {cap:,} 的上限",
    },
    "detail.response_too_large_bytes": {
        "en": "the model service sent more than {bytes:,} bytes in one piece, more than a response "
        "within the {cap:,}-character cap can take; reading stopped there",
        "zh": "模型服务在一段数据里发送了超过 {bytes:,} 字节，"
        "超出了 {cap:,} 个字符上限内的回复所能占用的大小；已停止读取",
    },
    "detail.truncated": {
        "en": "the model's response was cut off at the output-token limit after {size:,} characters",
        "zh": "模型的回复在 {size:,} 个字符后达到输出令牌上限而被截断",
    },
    "detail.truncated_calls": {
        "en": "the model's response was cut off at the output-token limit after {size:,} characters; "
        "{count} call(s) not executed",
        "zh": "模型的回复在 {size:,} 个字符后达到输出令牌上限而被截断；{count} 个调用没有执行",
    },
    "detail.provider_crashed": {
        "en": "the model provider failed unexpectedly ({kind})",
        "zh": "模型服务意外出错（{kind}）",
    },
    "detail.still_waiting": {"en": "a call is still waiting for approval", "zh": "还有一个调用在等待确认"},
    "detail.interrupted": {"en": "interrupted by the person at the keyboard", "zh": "被键盘前的人中断"},
    "detail.terminated": {"en": "terminated by a signal (SIGTERM)", "zh": "被信号（SIGTERM）终止"},
    "detail.awaiting": {"en": "{actions}", "zh": "{actions}"},  # what waits for a person: each approval's own words
    "trace.why": {"en": ": {why}", "zh": "：{why}"},
    # ---- numbers with their unit (orderbot.i18n.counted): English as "singular|plural" ---------
    "list.separator": {"en": "; ", "zh": "；"},  # between the phrases of a list (orderbot.i18n.say)
    "text.then": {"en": "{first}{second}", "zh": "{first}{second}"},  # two phrases said one after the other
    "count.step": {"en": "{count:,} step|{count:,} steps", "zh": "{count:,} 步"},
    "count.tool_call": {"en": "{count:,} tool call|{count:,} tool calls", "zh": "{count:,} 个工具调用"},
    "count.call": {"en": "{count:,} call|{count:,} calls", "zh": "{count:,} 个调用"},
    "count.item": {"en": "{count:,} item|{count:,} items", "zh": "{count:,} 项"},
    "count.character": {"en": "{count:,} character|{count:,} characters", "zh": "{count:,} 个字符"},
    "count.result": {"en": "{count:,} result|{count:,} results", "zh": "{count:,} 个结果"},
    "count.order": {"en": "{count:,} order|{count:,} orders", "zh": "{count:,} 个订单"},
    "count.entry": {"en": "{count:,} entry|{count:,} entries", "zh": "{count:,} 条"},
    "count.problem": {"en": "{count:,} problem|{count:,} problems", "zh": "{count:,} 个问题"},
    "count.model_turn": {
        "en": "{count:,} recorded model turn|{count:,} recorded model turns",
        "zh": "{count:,} 个已记录的模型回合",
    },
    # ---- the limits of a run (a header line, the REPL's banner and /limits) ---------------------
    "limits.line": {
        "en": "limits: {steps} · {calls} ({per_step} per step) · {seconds} s",
        "zh": "上限：{steps} · {calls}（每步 {per_step} 个）· {seconds} 秒",
    },
    # ---- what became of a call: the --trace panel (decision.*) and one-line views (decision_short.*)
    "decision.executed": {"en": "allowed, executed", "zh": "允许，已执行"},
    "decision.approved": {"en": "approved by the person, executed", "zh": "经人确认，已执行"},
    "decision.rejected": {"en": "rejected by the person", "zh": "被人拒绝"},
    "decision.unknown_tool": {
        "en": "refused: unknown tool (not in the whitelist)",
        "zh": "拒绝：未知工具（不在白名单中）",
    },
    "decision.invalid_arguments": {"en": "refused: invalid arguments", "zh": "拒绝：参数无效"},
    "decision.no_access": {"en": "refused: no access", "zh": "拒绝：无权访问"},
    "decision.sign_in_required": {"en": "refused: sign-in required", "zh": "拒绝：需要登录"},
    "decision.needs_approval": {"en": "needs approval: waiting for a person", "zh": "需要确认：等待人工确认"},
    "decision.not_executed": {"en": "not executed", "zh": "没有执行"},
    "decision.refused": {"en": "refused: {code}", "zh": "拒绝：{code}"},
    "decision.because": {"en": " ({reason})", "zh": "（{reason}）"},
    "decision_short.executed": {"en": "executed", "zh": "已执行"},
    "decision_short.approved": {"en": "approved, executed", "zh": "已确认并执行"},
    "decision_short.rejected": {"en": "rejected", "zh": "已拒绝"},
    "decision_short.needs_approval": {"en": "awaiting approval", "zh": "等待确认"},
    "decision_short.not_executed": {"en": "not executed", "zh": "没有执行"},
    "decision_short.refused": {"en": "refused ({code})", "zh": "拒绝（{code}）"},
    # ---- the --trace panels and the REPL's step lines (orderbot.ui.trace) -----------------------
    "trace.sent": {"en": "sent", "zh": "发送"},
    "trace.proposed": {"en": "model proposed", "zh": "模型提议"},
    "trace.answered": {"en": "model answered", "zh": "模型回答"},
    "trace.call": {"en": "call {index}", "zh": "调用 {index}"},
    "trace.arguments": {"en": "arguments", "zh": "参数"},
    "trace.decision": {"en": "decision", "zh": "决定"},
    "trace.result": {"en": "result", "zh": "结果"},
    "trace.finish": {"en": "finish", "zh": "结束"},
    "trace.time": {"en": "time", "zh": "用时"},
    "trace.budget_left": {"en": "budget left", "zh": "剩余额度"},
    "trace.nothing_sent": {"en": "nothing: no model request in this step", "zh": "无：这一步没有请求模型"},
    "trace.tokens": {"en": "{input} in / {output} out", "zh": "输入 {input} / 输出 {output}"},
    "trace.not_reported": {"en": "not reported", "zh": "未报告"},
    "trace.no_tools": {"en": "none", "zh": "无"},
    "trace.sent_value": {
        "en": "{items}, {chars} · tokens: {tokens} · tools offered: {tools}",
        "zh": "{items}，{chars} · 令牌：{tokens} · 提供的工具：{tools}",
    },
    "trace.unknown": {"en": "unknown", "zh": "未知"},
    "trace.budget_value": {"en": "{steps} · {calls} · {seconds:.1f} s", "zh": "{steps} · {calls} · {seconds:.1f} 秒"},
    "trace.ms": {"en": " · {ms} ms", "zh": " · {ms} 毫秒"},
    "trace.time_request": {"en": "model request {ms} ms", "zh": "模型请求 {ms} 毫秒"},
    "trace.time_tools": {"en": "tools {ms} ms", "zh": "工具 {ms} 毫秒"},
    "trace.time_step": {"en": "step {ms} ms", "zh": "整步 {ms} 毫秒"},
    "trace.step": {"en": "step {step}", "zh": "第 {step} 步"},
    "trace.run": {"en": "run", "zh": "运行"},
    "trace.stopped": {"en": "stopped: {reason}", "zh": "已停止：{reason}"},
    "trace.stopped_before": {"en": "the run stopped before it ran", "zh": "运行在它执行之前就停止了"},
    "trace.budget_used": {
        "en": "[{steps}/{max_steps} steps · {calls}/{max_calls} calls · {seconds:.1f}s]",
        "zh": "[步数 {steps}/{max_steps} · 调用 {calls}/{max_calls} · {seconds:.1f} 秒]",
    },
    # ---- what a transition is (the event column; orderbot.loop.state.Event) ---------------------
    "phase.start": {"en": "start", "zh": "开始"},
    "phase.plan": {"en": "plan", "zh": "规划"},
    "phase.act": {"en": "act", "zh": "执行"},
    "phase.observe": {"en": "observe", "zh": "观察"},
    "phase.awaiting_approval": {"en": "awaiting_approval", "zh": "等待确认"},
    "phase.finish": {"en": "finish", "zh": "结束"},
    "event.started": {"en": "started", "zh": "开始"},
    "event.resumed": {"en": "resumed", "zh": "继续"},
    "event.proposed_one": {"en": "proposed {count} call", "zh": "提议 {count} 个调用"},
    "event.proposed": {"en": "proposed {count} calls", "zh": "提议 {count} 个调用"},
    "event.executed": {"en": "executed", "zh": "已执行"},
    "event.approved": {"en": "approved and executed", "zh": "已确认并执行"},
    "event.rejected": {"en": "rejected by the person", "zh": "被人拒绝"},
    "event.refused": {"en": "{code}", "zh": "拒绝（{code}）"},
    "event.awaiting_approval": {"en": "approval needed", "zh": "需要确认"},
    "event.signed_in": {"en": "signed in", "zh": "已登录"},
    "event.returned": {"en": "returned", "zh": "结果交给模型"},
    # the event of a run's last row: its stop reason in words (the value itself stays in "stop reason: …")
    "event.finished.answered": {"en": "answered", "zh": "已回答"},
    "event.finished.step_limit": {"en": "step_limit", "zh": "达到步数上限"},
    "event.finished.time_limit": {"en": "time_limit", "zh": "达到时间上限"},
    "event.finished.tool_call_limit": {"en": "tool_call_limit", "zh": "达到调用上限"},
    "event.finished.response_too_large": {"en": "response_too_large", "zh": "回复过大"},
    "event.finished.response_truncated": {"en": "response_truncated", "zh": "回复被截断"},
    "event.finished.awaiting_approval": {"en": "awaiting_approval", "zh": "等待确认"},
    "event.finished.transferred": {"en": "transferred", "zh": "已转人工"},
    "event.finished.model_error": {"en": "model_error", "zh": "模型出错"},
    "event.finished.cancelled": {"en": "cancelled", "zh": "已取消"},
    "detail.returned_one": {
        "en": "{count} result to the model: {ok} ok, {failed} failed",
        "zh": "{count} 个结果交给模型：{ok} 个成功，{failed} 个失败",
    },
    "detail.returned": {
        "en": "{count} results to the model: {ok} ok, {failed} failed",
        "zh": "{count} 个结果交给模型：{ok} 个成功，{failed} 个失败",
    },
    "detail.signed_in": {"en": "customer {customer} (by {tool})", "zh": "客户 {customer}（由 {tool} 确认）"},
    "detail.call_ok": {"en": "ok {data}", "zh": "成功 {data}"},
    "detail.call_failed": {"en": "error {code}", "zh": "失败：{code}"},
    # ---- the end of a run ------------------------------------------------------------------------
    "outcome.stop": {"en": "{sentence} {detail}.", "zh": "{sentence}{detail}。"},
    "outcome.answer": {"en": "Answer", "zh": "回答"},
    "outcome.partial_answer": {"en": "Partial answer (cut off)", "zh": "不完整的回答（被截断）"},
    "outcome.observed": {"en": "Observed before the stop:", "zh": "停止前已查到的结果："},
    "outcome.stop_line": {
        "en": "stop reason: {reason} · run id: {run_id}",
        "zh": "停止原因：{reason} · 运行编号：{run_id}",
    },
    "outcome.to_resume": {"en": "To resume:", "zh": "继续这次运行："},
    "outcome.to_approve_elsewhere": {
        "en": "To approve it, at another operator's desk:",
        "zh": "在另一位操作员那里批准它：",
    },
    "outcome.or_reject": {"en": "(or --reject)", "zh": "（或 --reject 拒绝）"},
    "outcome.tokens": {"en": "tokens: {input} in / {output} out", "zh": "令牌：输入 {input} / 输出 {output}"},
    "outcome.not_finished": {
        "en": "The run did not finish: the process ended (killed or crashed) after the last transition shown.",
        "zh": "这次运行没有结束：进程在上面最后一个状态转换之后终止了（被杀死或崩溃）。",
    },
    "outcome.dropped": {
        "en": "({count} older transitions were dropped to keep the record small)",
        "zh": "（为保持记录精简，删去了较早的 {count} 个状态转换）",
    },
    # ---- headers -----------------------------------------------------------------------------------
    "header.run": {
        "en": "orderbot · run {run_id} · {provider} · user {user}",
        "zh": "orderbot · 运行 {run_id} · {provider} · 用户 {user}",
    },
    "header.record": {
        "en": "orderbot · run {run_id} · {model} · user {user} · started {started}",
        "zh": "orderbot · 运行 {run_id} · {model} · 用户 {user} · 开始于 {started}",
    },
    "header.anonymous": {"en": "anonymous", "zh": "匿名"},
    "header.offline": {
        "en": "model: offline (built-in planner, no network)",
        "zh": "模型：offline（内置规划器，不联网）",
    },
    "header.model": {"en": "model: {provider}/{model}", "zh": "模型：{provider}/{model}"},
    "header.auto_key": {"en": "[auto: OPENAI_API_KEY is set]", "zh": "[auto：已设置 OPENAI_API_KEY]"},
    "header.auto_base_url": {"en": "[auto: a base URL is set]", "zh": "[auto：设置了基础 URL]"},
    "header.auto_no_key": {"en": "[auto: no OPENAI_API_KEY]", "zh": "[auto：未设置 OPENAI_API_KEY]"},
    "header.resumed": {"en": "resumed", "zh": "已继续"},
    "header.base_url": {"en": "at {url}", "zh": "地址 {url}"},
    "header.base_url_changed": {
        "en": "at {url}, given by --base-url (the run used {was})",
        "zh": "地址 {url}，由 --base-url 指定（这次运行原来用的是 {was}）",
    },
    "header.default_service": {"en": "the provider's own service", "zh": "服务商自己的服务"},
    "header.segment": {"en": "{kind}{settled} · {started}", "zh": "{kind}{settled} · {started}"},
    "header.approved": {"en": ", approved", "zh": "，已批准"},
    "header.rejected": {"en": ", rejected", "zh": "，已拒绝"},
    # ---- tables ------------------------------------------------------------------------------------
    "table.step": {"en": "step", "zh": "步"},
    "table.transition": {"en": "from → to", "zh": "状态"},
    "table.event": {"en": "event", "zh": "事件"},
    "table.detail": {"en": "detail", "zh": "详情"},
    "table.ms": {"en": "ms", "zh": "毫秒"},
    "table.budget": {"en": "steps calls time", "zh": "步数 调用 时间"},
    "table.run_id": {"en": "id", "zh": "编号"},
    "table.started": {"en": "started (UTC)", "zh": "开始（UTC）"},
    "table.user": {"en": "user", "zh": "用户"},
    "table.stop_reason": {"en": "stop reason", "zh": "停止原因"},
    "table.steps": {"en": "steps", "zh": "步数"},
    "table.calls": {"en": "calls", "zh": "调用"},
    "table.question": {"en": "question", "zh": "问题"},
    "table.unreadable": {"en": "unreadable", "zh": "无法读取"},
    # ---- approval ----------------------------------------------------------------------------------
    "approve.prompt": {"en": "{description}?", "zh": "{description}？"},
    "approve.choices": {"en": "[y/N]", "zh": "[y/N]"},
    # What the sample shop's cancellation will do, as the prompt, the pause and the queue show it.
    "approve.cancel": {
        "en": "Cancel {order_id} ({status}, {total}), reason: {reason}",
        "zh": "取消订单 {order_id}（{status}，{total}），原因：{reason}",
    },
    "approve.cancel_unknown": {
        "en": "Cancel {order_id}, reason: {reason}",
        "zh": "取消订单 {order_id}，原因：{reason}",
    },
    # ---- waiting for the model ---------------------------------------------------------------------
    "status.waiting": {
        "en": "waiting for the model · {elapsed:.0f} s · {left:.0f} s left",
        "zh": "等待模型回答 · 已用 {elapsed:.0f} 秒 · 剩余 {left:.0f} 秒",
    },
    "waiting.cut": {
        "en": "Cut off here: the run was cancelled while the answer was coming in.",
        "zh": "回答到此中断：回答传来时运行被取消了。",
    },
    "status.retry": {
        "en": "{reason}, retrying in {delay:.1f} s, attempt {attempt} of {attempts}",
        "zh": "{reason}，{delay:.1f} 秒后重试，第 {attempt} 次，共 {attempts} 次",
    },
    # ---- the REPL ----------------------------------------------------------------------------------
    "repl.banner": {"en": "orderbot repl · {provider} · user {user}", "zh": "orderbot repl · {provider} · 用户 {user}"},
    "repl.banner_help": {
        "en": "{limits} · /help for commands, Ctrl-D to leave",
        "zh": "{limits} · 输入 /help 查看命令，Ctrl-D 退出",
    },
    "repl.help": {
        "en": (
            "/help                 this list (so does help)\n"
            "/clear                clear the screen (so does clear)\n"
            "/trace on|off         per-step panels instead of one line per step\n"
            "/limits               show the limits of each run\n"
            "/limits steps=5 timeout=20 calls=4 per-step=2\n"
            "                      change them for the next runs\n"
            "/user [ID]            show who is asking, or switch (this starts a new conversation)\n"
            "/reset                forget the earlier turns\n"
            "/runs [all]           the runs of this session (all: every recorded run)\n"
            "/exit                 leave (so do exit, quit, :q, Ctrl-D, and Ctrl-C at an empty prompt)\n"
            "Ctrl-C during a run cancels that run."
        ),
        "zh": (
            "/help                 显示这份列表（输入 help 也可以）\n"
            "/clear                清屏（输入 clear 也可以）\n"
            "/trace on|off         每一步显示详细面板，而不是一行\n"
            "/limits               显示每次运行的上限\n"
            "/limits steps=5 timeout=20 calls=4 per-step=2\n"
            "                      修改之后运行的上限\n"
            "/user [ID]            显示当前用户，或切换用户（会开始新的对话）\n"
            "/reset                忘掉之前的对话\n"
            "/runs [all]           这次会话的运行（all：所有记录的运行）\n"
            "/exit                 退出（exit、quit、:q、Ctrl-D，或在空提示符下按 Ctrl-C 也可以）\n"
            "运行中按 Ctrl-C 会取消这次运行。"
        ),
    },
    "repl.cancelled": {"en": "Cancelled.", "zh": "已取消。"},
    "repl.more": {
        "en": "Press c to continue this run with a larger budget ({more}), any other key to go on.",
        "zh": "按 c 以更大的额度（{more}）继续这次运行，按其他键跳过。",
    },
    "repl.unknown": {
        "en": "Unknown command {name}: /help lists the commands.",
        "zh": "没有 {name} 这个命令：/help 列出所有命令。",
    },
    "repl.trace_usage": {
        "en": "/trace on or /trace off (it is {state}).",
        "zh": "/trace on 或 /trace off（现在是 {state}）。",
    },
    "repl.trace_set": {"en": "Trace is {state}.", "zh": "逐步详细视图已设为 {state}。"},
    "repl.limits_unchanged": {"en": "{error}; the limits are unchanged.", "zh": "{error}；上限没有改变。"},
    "repl.limits": {"en": "Each run's {limits}.", "zh": "每次运行的{limits}。"},
    "repl.user": {"en": "User: {user}.", "zh": "用户：{user}。"},
    "repl.bad_user": {
        "en": "A user id is 1 to 64 letters, digits or . _ - @, starting with a letter or digit, e.g. C001.",
        "zh": "用户编号由 1 到 64 个字母、数字或 . _ - @ 组成，以字母或数字开头，例如 C001。",
    },
    "repl.user_switched": {
        "en": "User: {user}. The conversation starts afresh.",
        "zh": "用户：{user}。对话重新开始。",
    },
    "repl.reset": {"en": "The earlier turns are forgotten.", "zh": "之前的对话已忘掉。"},
    "repl.runs_usage": {
        "en": "/runs shows this session's runs, /runs all every recorded run.",
        "zh": "/runs 显示这次会话的运行，/runs all 显示所有记录的运行。",
    },
    "repl.no_runs_yet": {
        "en": "No runs in this session yet: /runs all shows every recorded run.",
        "zh": "这次会话还没有运行：/runs all 显示所有记录的运行。",
    },
    "repl.runs_hint": {
        "en": "orderbot runs show ID shows one of them; orderbot resume ID continues it.",
        "zh": "orderbot runs show ID 查看其中一次；orderbot resume ID 继续它。",
    },
    # ---- orderbot runs -----------------------------------------------------------------------------
    "runs.server_model": {"en": "server model: {model}", "zh": "服务器模型：{model}"},
    "runs.fingerprint": {"en": "fingerprint {fingerprint}", "zh": "指纹 {fingerprint}"},
    "runs.altered": {
        "en": "This record was altered outside orderbot ({reason}): it is shown as found, "
        "and will not be resumed or replayed.",
        "zh": "这条记录在 orderbot 之外被改动过（{reason}）：按原样显示，不会被恢复或重放。",
    },
    "runs.record_not_json": {
        "en": "{path}: the run record is corrupt (not valid JSON: {error})",
        "zh": "{path}：运行记录已损坏（不是有效的 JSON：{error}）",
    },
    # why a listed run cannot be read (its summary's `error`, kept in English: --json shows it)
    "runs.unreadable_not_json": {"en": "not valid JSON", "zh": "不是有效的 JSON"},
    "runs.unreadable_not_a_record": {"en": "not an orderbot run record", "zh": "不是 orderbot 的运行记录"},
    "runs.unreadable_index_line": {
        "en": "its line in the runs index is damaged",
        "zh": "它在运行索引中的那一行已损坏",
    },
    "runs.unreadable_damaged_summary": {
        "en": "its summary in the run store is damaged",
        "zh": "它在运行存储中的摘要已损坏",
    },
    "runs.none": {"en": "No runs recorded in {dir}.", "zh": "{dir} 中没有记录任何运行。"},
    "runs.cannot_export": {"en": "cannot write {path} ({reason})", "zh": "无法写入 {path}（{reason}）"},
    "runs.no_match": {"en": "No runs match.", "zh": "没有符合条件的运行。"},
    "runs.approved": {"en": "approved", "zh": "已批准"},
    "runs.rejected": {"en": "rejected", "zh": "已拒绝"},
    # ---- run stores (--runs), the approval queue, the audit log -------------------------------
    "runs.bad_url": {
        "en": "{url}: unknown kind of run store; use sqlite:///runs.db or postgresql://user@host/db "
        "(or nothing, for the state directory)",
        "zh": "{url}：未知的运行存储类型；请用 sqlite:///runs.db 或 postgresql://user@host/db（或不设置，使用状态目录）",
    },
    "runs.bad_sqlite_url": {
        "en": "{url}: write a SQLite run store as sqlite:///path/to/runs.db",
        "zh": "{url}：SQLite 运行存储的写法是 sqlite:///path/to/runs.db",
    },
    "runs.no_folder": {
        "en": "{where}: the folder {folder} does not exist",
        "zh": "{where}：文件夹 {folder} 不存在",
    },
    "runs.cannot_open": {"en": "{where}: cannot be opened ({why})", "zh": "{where}：无法打开（{why}）"},
    "runs.schema_newer": {
        "en": "{where}: run store schema version {found} is newer than this orderbot reads ({reads}); upgrade orderbot",
        "zh": "{where}：运行存储的结构版本 {found} 比这个 orderbot 能读的版本（{reads}）新；请升级 orderbot",
    },
    "runs.schema_unknown": {
        "en": "{where}: run store schema version {found} is not one this orderbot can migrate (it reads {reads})",
        "zh": "{where}：运行存储的结构版本 {found} 无法由这个 orderbot 迁移（它读取版本 {reads}）",
    },
    "runs.schema_damaged": {
        "en": "{where}: the run store's schema version table is damaged (it must hold one number)",
        "zh": "{where}：运行存储的结构版本表已损坏（它应当只有一个数字）",
    },
    "runs.key_damaged": {
        "en": "{where}: the run store's record key (run_key) is missing or damaged",
        "zh": "{where}：运行存储的记录密钥（run_key）缺失或已损坏",
    },
    "runs.store_busy": {
        "en": "{where}: the run store stayed busy with other writers (try again)",
        "zh": "{where}：运行存储一直忙于其他写入（请重试）",
    },
    "runs.store_failed": {
        "en": "{where}: the run store failed ({why})",
        "zh": "{where}：运行存储出错（{why}）",
    },
    "runs.migration_refused": {
        "en": "{where}: the run store was made by an older orderbot (schema version {found}) and this session "
        "cannot bring it up to date; its owner opens it once (orderbot runs --runs with the owner's role): {why}",
        "zh": "{where}：运行存储由旧版 orderbot 创建（结构版本 {found}），这个会话无法升级它；"
        "请由它的所有者打开一次（用所有者的角色执行 orderbot runs --runs）：{why}",
    },
    "runs.settled_outside": {
        "en": "run {run_id}: its approval in {where} names {by}, whom the audit log or the store's rules do not "
        "bear out; nothing was executed",
        "zh": "运行 {run_id}：{where} 中它的批准记在 {by} 名下，但审计日志或存储的规则不支持这一点；什么都没有执行",
    },
    "runs.role_switched": {
        "en": "{where}: this session logged in as {login} but acts as {role} (a role option in the URL or "
        "PGOPTIONS, or a role default); orderbot asks and decides only as the role that logged in: connect "
        "without switching roles; nothing was done",
        "zh": "{where}：这个会话以 {login} 登录，却以 {role} 的身份操作（URL 或 PGOPTIONS 中的 -c role=… 选项，"
        "或角色的默认设置）；orderbot 只以登录的角色发起和决定操作：请不切换角色重新连接；什么都没有做",
    },
    "runs.refused_no_call": {
        "en": "no call {call_id} of run {run_id} was asked for: there is nothing to decide",
        "zh": "运行 {run_id} 没有请求过调用 {call_id}：没有可以决定的",
    },
    "runs.refused_not_an_approver": {
        "en": "{operator} is not on the list of operators who may approve (run_approvers)",
        "zh": "{operator} 不在允许批准的操作员名单（run_approvers）上",
    },
    "runs.refused_four_eyes": {
        "en": "four eyes: {operator} asked for the action of run {run_id} or started the run, and cannot approve it",
        "zh": "四眼原则：{operator} 发起了运行 {run_id} 或它的操作，不能自己批准",
    },
    "runs.refused_no_approval": {
        "en": "{operator} has not approved call {call_id} of run {run_id}: it is carried out only by the one who "
        "approved it; nothing was executed",
        "zh": "{operator} 没有批准运行 {run_id} 的调用 {call_id}：只有批准它的人才能执行它；什么都没有执行",
    },
    "runs.refused_other_call": {
        "en": "call {call_id} of run {run_id} is not the call that was approved (its tool, arguments or customer "
        "differ); nothing was executed",
        "zh": "运行 {run_id} 的调用 {call_id} 不是被批准的那个调用（工具、参数或客户不同）；什么都没有执行",
    },
    "runs.refused_no_execution": {
        "en": "{operator} is not carrying out call {call_id} of run {run_id}: no outcome can be logged for it",
        "zh": "{operator} 没有在执行运行 {run_id} 的调用 {call_id}：不能为它记录结果",
    },
    "runs.refused_role_switched": {
        "en": "the session logged in as {login} acts as {role}: the queue and the audit log take only the role "
        "that logged in",
        "zh": "以 {login} 登录的会话正以 {role} 的身份操作：审批队列和审计日志只接受登录的角色",
    },
    "runs.written_by_the_store": {
        "en": "{table} is written only by the run store's functions (run_propose, run_decide, run_execute, "
        "run_outcome)",
        "zh": "{table} 只能由运行存储的函数写入（run_propose、run_decide、run_execute、run_outcome）",
    },
    "runs.started_by": {
        "en": "run {run_id} is started by the role that logged in ({login}), and who started it never changes",
        "zh": "运行 {run_id} 由登录的角色（{login}）发起，发起人不能更改",
    },
    "runs.migration_needs_key": {
        "en": "{where}: its audit log is linked with an audit key from entry {seq} on, which the server will keep "
        "linking it with: its owner opens it once with that key (ORDERBOT_AUDIT_KEY or ORDERBOT_AUDIT_KEY_FILE)",
        "zh": "{where}：它的审计日志从第 {seq} 条起用审计密钥链接，服务器此后也将用它链接："
        "请由所有者带着这个密钥打开一次（ORDERBOT_AUDIT_KEY 或 ORDERBOT_AUDIT_KEY_FILE）",
    },
    "runs.migration_other_key": {
        "en": "{where}: its audit log's keyed entries (the newest is {seq}) do not match this session's audit key: "
        "its owner opens it once with the key the desks linked it with",
        "zh": "{where}：它的审计日志中用密钥链接的记录（最新的是第 {seq} 条）与这个会话的审计密钥不符："
        "请由所有者带着各工位链接它所用的密钥打开一次",
    },
    "runs.store_refused": {
        "en": "{where}: the run store refused this: {why}",
        "zh": "{where}：运行存储拒绝了这个操作：{why}",
    },
    "runs.store_lost": {
        "en": "{where}: the run store stopped answering (the connection was lost); what it held before stays",
        "zh": "{where}：运行存储不再响应（连接已断开）；之前保存的内容都在",
    },
    "runs.none_in": {"en": "no runs recorded in {where}", "zh": "{where} 中没有记录任何运行"},
    "runs.no_such_run": {"en": "no run {run_id} in {where}", "zh": "{where} 中没有运行 {run_id}"},
    "runs.not_an_id": {
        "en": "{value} is not a run id (they look like 261130-050026-1a2b)",
        "zh": "{value} 不是运行编号（运行编号形如 261130-050026-1a2b）",
    },
    "runs.no_prefix": {"en": "no run starting with {prefix} in {where}", "zh": "{where} 中没有以 {prefix} 开头的运行"},
    "runs.ambiguous": {
        "en": "{prefix} matches several runs ({some}, ...): give more of the id",
        "zh": "{prefix} 匹配到多个运行（{some} 等）：请给出更长的编号",
    },
    "runs.verb_approved": {"en": "approved", "zh": "批准"},
    "runs.verb_rejected": {"en": "rejected", "zh": "拒绝"},
    "runs.settled_first": {
        "en": "run {run_id}: {tool} was already {verb} by {by} at {at}; nothing was done here",
        "zh": "运行 {run_id}：{tool} 已由 {by} 于 {at} {verb}；这里没有执行任何操作",
    },
    "runs.id_taken": {
        "en": "run id {run_id} is already another run's in {where} (two runs started in the same second drew "
        "the same id); this run stopped before doing anything: start it again",
        "zh": "运行编号 {run_id} 在 {where} 中已属于另一个运行（同一秒开始的两个运行抽到了同一个编号）；"
        "这个运行在做任何事之前就停止了：请重新开始",
    },
    "runs.changed_elsewhere": {
        "en": "run {run_id} was changed by another orderbot since it was read (resumed elsewhere?); "
        "nothing was done here",
        "zh": "运行 {run_id} 在读取之后被另一个 orderbot 改动了（在别处继续了？）；这里没有执行任何操作",
    },
    "runs.pruned": {
        "en": "run {run_id} was pruned at {at}: only its summary is kept, it cannot be resumed or replayed",
        "zh": "运行 {run_id} 已于 {at} 精简：只保留了摘要，不能继续或重放",
    },
    "approvals.not_an_approver": {
        "en": "{operator} is not on the run store's list of operators who may approve (run_approvers); "
        "run {run_id} was not approved, nothing was executed",
        "zh": "{operator} 不在运行存储允许批准的操作员名单（run_approvers）上；"
        "运行 {run_id} 没有被批准，什么都没有执行",
    },
    "approvals.four_eyes": {
        "en": "four eyes: {operator} asked for the action of run {run_id} and cannot approve it; another operator "
        "must (orderbot approvals approve {run_id}); nothing was executed",
        "zh": "四眼原则：{operator} 发起了运行 {run_id} 的操作，不能自己批准；需要另一位操作员批准"
        "（orderbot approvals approve {run_id}）；什么都没有执行",
    },
    "table.customer": {"en": "customer", "zh": "客户"},
    "table.token": {"en": "token", "zh": "令牌"},
    "table.names": {"en": "for", "zh": "代表"},
    "table.made_by": {"en": "made by", "zh": "创建人"},
    "table.made": {"en": "made (UTC)", "zh": "创建于（UTC）"},
    "table.expires": {"en": "expires (UTC)", "zh": "过期于（UTC）"},
    "table.state": {"en": "state", "zh": "状态"},
    "table.operator": {"en": "operator", "zh": "操作员"},
    "table.action": {"en": "action", "zh": "操作"},
    "table.requested_by": {"en": "requested by", "zh": "发起人"},
    "table.decided_by": {"en": "decided by", "zh": "决定人"},
    "table.waiting_since": {"en": "waiting since (UTC)", "zh": "等待自（UTC）"},
    "table.seq": {"en": "#", "zh": "#"},
    "table.time": {"en": "time (UTC)", "zh": "时间（UTC）"},
    "table.call": {"en": "call", "zh": "调用"},
    "approvals.expired": {"en": "(expired)", "zh": "（已过期）"},
    "approvals.none": {
        "en": "No action is waiting for approval in {where}.",
        "zh": "{where} 中没有等待批准的操作。",
    },
    "approvals.or_reject": {
        "en": "(another desk approves it; or: orderbot approvals reject … --reason TEXT)",
        "zh": "（由另一位操作员批准；或：orderbot approvals reject … --reason 原因）",
    },
    "approvals.login_or_reject": {
        "en": "({login}: their own database login, in each URL; anyone may reject it: "
        "orderbot approvals reject … --reason TEXT)",
        "zh": "（{login}：换成批准者自己的数据库登录名，每个 URL 里都要换；任何人都可以拒绝："
        "orderbot approvals reject … --reason 原因）",
    },
    "approvals.anyone_rejects": {
        "en": "(anyone may reject it: orderbot approvals reject … --reason TEXT)",
        "zh": "（任何人都可以拒绝：orderbot approvals reject … --reason 原因）",
    },
    "approvals.orders_own_login": {
        "en": "{error}; the run's record names its orders with the login of the operator who started it: "
        "pass --orders with your own ({orders})",
        "zh": "{error}；运行记录里的订单连接用的是发起运行的操作员的登录名：请用 --orders 给出你自己的（{orders}）",
    },
    "approvals.reason_needed": {
        "en": "say why with --reason: the audit log keeps it",
        "zh": "请用 --reason 说明原因：审计日志会记下它",
    },
    "audit.reason": {"en": "reason: {reason}", "zh": "理由：{reason}"},
    "audit.none": {"en": "No audit entries match.", "zh": "没有符合条件的审计记录。"},
    "audit.empty": {"en": "The audit log in {where} is empty.", "zh": "{where} 中的审计日志是空的。"},
    "audit.intact": {
        "en": "The audit log is intact: {entries}, each linked to the one before. Head: {head}",
        "zh": "审计日志完好：共 {entries}，每条都与前一条相连。末端哈希：{head}",
    },
    "audit.broken": {
        "en": "The audit log does not verify: {problems} in {entries}.",
        "zh": "审计日志校验未通过：{entries}中发现 {problems}。",
    },
    "audit.more_problems": {"en": "... and {count} more", "zh": "……还有 {count} 个"},
    "audit.bad_time": {
        "en": "{flag}: {value!r} is not a date or time (use 2026-12-01 or 2026-12-01T10:00)",
        "zh": "{flag}：{value!r} 不是日期或时间（请用 2026-12-01 或 2026-12-01T10:00）",
    },
    "runs.pruned_note": {
        "en": "pruned at {at}: only the summary is kept (stop reason {status}); the audit log keeps its side effects",
        "zh": "已于 {at} 精简：只保留摘要（停止原因 {status}）；审计日志保留了它的副作用记录",
    },
    "runs.pruned_count": {
        "en": "Pruned {count} runs older than {days} days: their summaries and the audit log are kept.",
        "zh": "已精简 {count} 个超过 {days} 天的运行：它们的摘要和审计日志都保留了。",
    },
    "audit.unreadable": {
        "en": "entry {seq} cannot be read as an audit entry: it was changed",
        "zh": "第 {seq} 条无法作为审计记录读取：它被改动过",
    },
    "audit.missing_one": {"en": "entry {seq} is missing: removed", "zh": "第 {seq} 条缺失：已被删除"},
    "audit.missing": {
        "en": "entries {first} to {last} are missing: removed",
        "zh": "第 {first} 到第 {last} 条缺失：已被删除",
    },
    "audit.out_of_order": {
        "en": "entry {seq} appears out of order: the log was rearranged",
        "zh": "第 {seq} 条的顺序不对：日志被重新排列过",
    },
    "audit.broken_link": {
        "en": "entry {seq} does not follow the entry before it: an earlier entry was changed or removed",
        "zh": "第 {seq} 条与前一条接不上：之前的某条记录被改动或删除过",
    },
    "audit.changed": {
        "en": "entry {seq} was changed (its hash does not match its fields)",
        "zh": "第 {seq} 条被改动过（它的哈希与内容不符）",
    },
    "audit.decision_missing": {
        "en": "the decision on {call_id} of run {run_id} is settled in the queue but missing from the log: removed",
        "zh": "运行 {run_id} 的 {call_id} 在审批队列中已有结论，但日志里没有：已被删除",
    },
    "audit.outcome_missing": {
        "en": "the outcome of {call_id} of run {run_id} is in the queue but missing from the log: removed",
        "zh": "运行 {run_id} 的 {call_id} 的执行结果在审批队列中有，但日志里没有：已被删除",
    },
    "audit.proposal_missing": {
        "en": "the proposal of {call_id} of run {run_id} is in the queue but missing from the log: removed",
        "zh": "运行 {run_id} 的 {call_id} 在审批队列中，但日志里没有它的提议记录：已被删除",
    },
    "audit.unknown_call": {
        "en": "entry {seq} is about {call_id} of run {run_id}, which neither the queue nor the run knows: added",
        "zh": "第 {seq} 条涉及运行 {run_id} 的 {call_id}，但审批队列和该运行都没有这个调用：是后加的",
    },
    "audit.repeated": {
        "en": "entry {seq} ({event}) logs {call_id} of run {run_id} a second time: added",
        "zh": "第 {seq} 条（{event}）第二次记录了运行 {run_id} 的 {call_id}：是后加的",
    },
    "audit.event_disagrees": {
        "en": "entry {seq} says {event} for {call_id} of run {run_id}, but the queue says {status}",
        "zh": "第 {seq} 条说运行 {run_id} 的 {call_id} {event}，但审批队列说 {status}",
    },
    "audit.names_disagree": {
        "en": "entry {seq} ({event} of {call_id}, run {run_id}) has {field} {said!r}, the queue {kept!r}",
        "zh": "第 {seq} 条（运行 {run_id} 的 {call_id}，{event}）的 {field} 是 {said!r}，审批队列中是 {kept!r}",
    },
    "audit.record_unbacked": {
        "en": "run {run_id}'s record says {by} {event} {call_id}, but neither the queue nor the log holds that "
        "decision: the record was written by hand",
        "zh": "运行 {run_id} 的记录说 {by} {event}了 {call_id}，但审批队列和日志都没有这个决定：记录是手工写的",
    },
    "audit.record_disagrees": {
        "en": "run {run_id}'s record says {by} {event} {call_id} that {asked_said} asked for, but the queue says "
        "{status} by {kept_by}, asked for by {asked}",
        "zh": "运行 {run_id} 的记录说 {by} {event}了 {asked_said} 请求的 {call_id}，但审批队列说是 {asked} 请求、"
        "{kept_by} {status}",
    },
    "audit.not_keyed": {
        "en": "entry {seq} is not linked with the audit key, though an entry before it is: appended or re-chained "
        "by someone without the key",
        "zh": "第 {seq} 条没有用审计密钥链接，而它之前已有用密钥链接的记录：是没有密钥的人追加或重新链接的",
    },
    "audit.other_key": {
        "en": "none of the {count} entries linked with a key matches this audit key: another key, or all of "
        "them were changed",
        "zh": "用密钥链接的 {count} 条记录没有一条与这个审计密钥相符：是另一个密钥，或者它们都被改动过",
    },
    "audit.needs_key": {
        "en": "entries from {seq} on are linked with an audit key: verify them with it (ORDERBOT_AUDIT_KEY or "
        "ORDERBOT_AUDIT_KEY_FILE)",
        "zh": "从第 {seq} 条起的记录用审计密钥链接：请用该密钥校验（ORDERBOT_AUDIT_KEY 或 ORDERBOT_AUDIT_KEY_FILE）",
    },
    "audit.never_keyed": {
        "en": "no entry is linked with the audit key: written without it, or the whole log was re-chained",
        "zh": "没有一条记录用审计密钥链接：写入时没有用密钥，或整个日志被重新链接过",
    },
    "audit.head_missing": {
        "en": "the head noted earlier ({head}) is no longer in the log: its newest entries were removed or the log "
        "was re-chained",
        "zh": "之前记下的末端哈希（{head}）已不在日志中：最新的记录被删除了，或日志被重新链接过",
    },
    "audit.bad_head": {
        "en": "--head: {value!r} is not a head --verify prints (64 hex digits, or hmac: and 64 hex digits)",
        "zh": "--head：{value!r} 不是 --verify 打印的末端哈希（64 位十六进制，或 hmac: 加 64 位十六进制）",
    },
    "audit.head_needs_verify": {
        "en": "--head is checked by --verify: give both",
        "zh": "--head 由 --verify 检查：请同时给出两者",
    },
    "audit.file_limit": {
        "en": "Anyone who can write {where} could also have rewritten the log and the queue to agree: note the head "
        "where they cannot write, and check it later with --head.",
        "zh": "能写 {where} 的任何人也都能把日志和审批队列一起改写成彼此一致：请把末端哈希记在他们写不到的地方，"
        "以后用 --head 核对。",
    },
    "audit.file_limit_keyed": {
        "en": "Anyone who can write {where} and holds the audit key (every desk) could also have rewritten the log "
        "and the queue to agree: note the head where they cannot write, and check it later with --head.",
        "zh": "能写 {where} 且持有审计密钥的任何人（每个工位都是）也都能把日志和审批队列一起改写成彼此一致："
        "请把末端哈希记在他们写不到的地方，以后用 --head 核对。",
    },
    "audit.intact_keyed": {
        "en": "The audit log is intact: {entries}, each linked to the one before, with the audit key from "
        "entry {first} on. Head: {head}",
        "zh": "审计日志完好：共 {entries}，每条都与前一条相连，从第 {first} 条起用审计密钥链接。末端哈希：{head}",
    },
    "audit.key_needed_to_append": {
        "en": "the audit log is linked with an audit key, and this session has none (ORDERBOT_AUDIT_KEY or "
        "ORDERBOT_AUDIT_KEY_FILE); nothing was written",
        "zh": "审计日志用审计密钥链接，而这个会话没有密钥（ORDERBOT_AUDIT_KEY 或 ORDERBOT_AUDIT_KEY_FILE）；"
        "什么都没有写入",
    },
    "audit.other_key_to_append": {
        "en": "the audit log's last entry ({seq}) does not match this session's audit key: another key, or the "
        "entry was changed (orderbot audit --verify); nothing was written",
        "zh": "审计日志的最后一条（第 {seq} 条）与这个会话的审计密钥不符：是另一个密钥，或该记录被改动过"
        "（orderbot audit --verify）；什么都没有写入",
    },
    # ---- orderbot doctor ---------------------------------------------------------------------------
    "doctor.provider": {"en": "provider:", "zh": "模型服务："},
    "doctor.model": {"en": "model:", "zh": "模型："},
    "doctor.base_url": {"en": "base URL:", "zh": "基础 URL："},
    "doctor.api_key": {"en": "API key:", "zh": "API 密钥："},
    "doctor.orders": {"en": "orders:", "zh": "订单："},
    "doctor.state_dir": {"en": "state dir:", "zh": "状态目录："},
    "doctor.runs": {"en": "runs:", "zh": "运行记录："},
    "doctor.shop": {"en": "shop:", "zh": "商店："},
    "doctor.limits": {"en": "limits:", "zh": "限制："},
    "doctor.shop_sample": {"en": "sample (order status and cancellation)", "zh": "sample（订单状态查询与取消）"},
    "doctor.shop_retail": {
        "en": "retail (tau2-bench: customers, products with variants, orders with payments)",
        "zh": "retail（tau2-bench：客户、多规格商品、带支付记录的订单）",
    },
    "doctor.limits_line": {
        "en": "{steps} steps, {calls} tool calls, {per_step} per step, {seconds:g} s",
        "zh": "{steps} 步，{calls} 次工具调用，每步 {per_step} 次，{seconds:g} 秒",
    },
    "doctor.limits_set": {"en": " ({names} set here)", "zh": "（{names} 由设置指定）"},
    "doctor.ping": {"en": "ping:", "zh": "连通测试："},
    "doctor.not_usable": {"en": "{what}: not usable: {error}", "zh": "{what}：不可用：{error}"},
    "doctor.log": {"en": "log:", "zh": "日志："},
    "doctor.log_dropped": {
        "en": "{path} cannot be written ({error}): runs drop their log lines",
        "zh": "{path} 无法写入（{error}）：运行时的日志会被丢弃",
    },
    "doctor.not_usable_short": {"en": "not usable: {error}", "zh": "不可用：{error}"},
    "keys.file_open": {
        "en": "the key store {path} may be read by others: make it private (chmod 600 {path}) or set the key again",
        "zh": "密钥库 {path} 其他人也能读取：请把它设为私有（chmod 600 {path}），或重新设置密钥",
    },
    "keys.unreadable": {"en": "cannot read the key store {path}: {why}", "zh": "无法读取密钥库 {path}：{why}"},
    "keys.not_a_store": {"en": "it is not a key store", "zh": "它不是密钥库"},
    "keys.saved": {
        "en": "kept the {name} key in {path} (mode 0600, not shown)",
        "zh": "已把 {name} 密钥保存在 {path}（权限 0600，不显示）",
    },
    "keys.empty": {"en": "the key is empty: nothing was kept", "zh": "密钥是空的：没有保存任何内容"},
    "keys.unknown": {
        "en": "unknown key {name}: choose one of {choices}",
        "zh": "未知的密钥 {name}：请从 {choices} 中选择",
    },
    "keys.prompt": {"en": "{name} key (not shown)", "zh": "{name} 密钥（不显示）"},
    "keys.from_store": {"en": "the key store {path}", "zh": "密钥库 {path}"},
    "keys.not_set": {"en": "not set", "zh": "未设置"},
    "models.offline": {
        "en": "offline: orderbot's built-in planner answers, with no server to ask; to list a server's models, "
        "set --base-url (OPENAI_BASE_URL) or OPENAI_API_KEY",
        "zh": "offline：由 orderbot 内置的规划器回答，没有可询问的服务器；要列出服务器的模型，请设置 --base-url"
        "（OPENAI_BASE_URL）或 OPENAI_API_KEY",
    },
    "models.at": {"en": "{count} models at {where} ({provider}):", "zh": "{where}（{provider}）提供 {count} 个模型："},
    "models.used": {"en": "* {name}  (orderbot uses this one)", "zh": "* {name}（orderbot 使用这个）"},
    "models.not_listed": {
        "en": "orderbot would use {name}, which the server does not list: choose one with --model or MODEL_NAME",
        "zh": "orderbot 会使用 {name}，但服务器没有列出它：请用 --model 或 MODEL_NAME 选一个",
    },
    "doctor.built_in": {"en": "{name} (built in, no network)", "zh": "{name}（内置，不联网）"},
    "doctor.auto_key": {"en": " (auto: OPENAI_API_KEY is set)", "zh": "（auto：已设置 OPENAI_API_KEY）"},
    "doctor.auto_base_url": {"en": " (auto: a base URL is set)", "zh": "（auto：设置了基础 URL）"},
    "doctor.auto_no_key": {"en": " (auto: no OPENAI_API_KEY)", "zh": "（auto：未设置 OPENAI_API_KEY）"},
    "doctor.offline_url_unused": {
        "en": "{url} (not used by the offline model: pass --provider chat to use it)",
        "zh": "{url}（offline 模型不使用它：要使用它请加 --provider chat）",
    },
    "doctor.url_unused": {"en": "not used by the offline model", "zh": "offline 模型不使用"},
    "doctor.url_default": {"en": "{url} (default)", "zh": "{url}（默认）"},
    "doctor.key_set": {"en": "set (not shown)", "zh": "已设置（不显示）"},
    "doctor.key_set_from": {"en": "set, from {where} (not shown)", "zh": "已设置，来自{where}（不显示）"},
    "doctor.key_unset": {"en": "not set", "zh": "未设置"},
    "doctor.sample": {"en": "{path} (the bundled sample, read-only)", "zh": "{path}（自带示例，只读）"},
    "doctor.order_count": {"en": "{where}: {count} orders", "zh": "{where}：{count} 个订单"},
    "doctor.order_count_one": {"en": "{where}: {count} order", "zh": "{where}：{count} 个订单"},
    "doctor.tool_calling": {"en": "tool calling:", "zh": "工具调用："},
    "doctor.tools_ok": {"en": "ok: a well-formed tool call came back", "zh": "正常：收到了格式正确的工具调用"},
    "doctor.tools_built_in": {
        "en": "ok: the built-in planner calls orderbot's tools itself",
        "zh": "正常：内置规划器自己调用 orderbot 的工具",
    },
    "doctor.tools_other": {
        "en": "a tool call came back, but for {name}, a tool that was not offered (only echo was)",
        "zh": "收到了工具调用，但调用的是 {name}，并不是提供的工具（只提供了 echo）",
    },
    "doctor.tools_malformed": {
        "en": "a tool call came back, but its arguments are not a JSON object",
        "zh": "收到了工具调用，但它的参数不是 JSON 对象",
    },
    "doctor.tools_text": {
        "en": "no tool call came back, only text: start llama.cpp with --jinja, or vLLM with "
        "--enable-auto-tool-choice and a --tool-call-parser",
        "zh": "没有收到工具调用，只有文本：llama.cpp 请加 --jinja 启动，vLLM 请加 "
        "--enable-auto-tool-choice 和 --tool-call-parser",
    },
    "doctor.tools_failed": {"en": "failed: {error}", "zh": "失败：{error}"},
    "doctor.ping_skipped": {"en": "skipped: the provider is not usable", "zh": "跳过：模型服务不可用"},
    "doctor.ping_failed": {"en": "failed: {error}", "zh": "失败：{error}"},
    "doctor.ping_ok": {"en": "ok: answered in {ms:.0f} ms", "zh": "正常：{ms:.0f} 毫秒内回答"},
    "doctor.ping_tokens": {"en": ", {input} tokens in, {output} out", "zh": "，输入 {input} 个令牌，输出 {output} 个"},
    # ---- orderbot replay -----------------------------------------------------------------------
    "replay.header": {
        "en": "replay · run {run_id} · {turns} · today's tools over a scratch copy of {source}",
        "zh": "重放 · 运行 {run_id} · {turns} · 用现在的工具处理 {source} 的临时副本",
    },
    "replay.note": {"en": "note: {note}", "zh": "注意：{note}"},
    "replay.same": {
        "en": "No difference: every step matches the record (stop reason {reason}).",
        "zh": "没有差异：每一步都与记录一致（停止原因 {reason}）。",
    },
    "replay.differences": {"en": "{count} differences from the record:", "zh": "与记录有 {count} 处差异："},
    "replay.differences_one": {"en": "{count} difference from the record:", "zh": "与记录有 {count} 处差异："},
    "replay.difference": {"en": "  step {step}: {text}", "zh": "  第 {step} 步：{text}"},
    "replay.call_new": {"en": "{call} is new: {now}", "zh": "{call} 是新的调用：{now}"},
    "replay.call_gone": {"en": "{call} no longer happens (was {was})", "zh": "{call} 不再发生（原来是 {was}）"},
    "replay.call_changed": {"en": "{call} was {was}; now {now}", "zh": "{call} 原来是 {was}；现在是 {now}"},
    "replay.step_changed": {"en": "was {was}; now {now}", "zh": "原来是 {was}；现在是 {now}"},
    "replay.step": {"en": "'{from_} → {to} {event}: {detail}'", "zh": "「{from_} → {to} {event}：{detail}」"},
    "replay.no_step": {"en": "nothing", "zh": "没有这一步"},
    "replay.stop_changed": {
        "en": "the run stopped with {was}; now with {now}",
        "zh": "这次运行原来以 {was} 停止；现在以 {now} 停止",
    },
    "replay.answer_changed": {"en": "the answer differs", "zh": "回答不同"},
    "replay.data_changed": {
        "en": "the orders are not as they were when the run began: its recorded tool results stand in for"
        " the tools, and orderbot's own steps are compared",
        "zh": "订单数据与这次运行开始时不同：用记录下的工具结果代替工具，比较的是 orderbot 自己的每一步",
    },
    "replay.data_changed_at": {
        "en": "the orders are not as they were when the run went on after step {step}: from there its"
        " recorded tool results stand in for the tools, and orderbot's own steps are compared",
        "zh": "订单数据与这次运行在第 {step} 步之后继续时不同："
        "从那里起用记录下的工具结果代替工具，比较的是 orderbot 自己的每一步",
    },
    "replay.other_data": {
        "en": "these orders are not the ones the run saw: a result that differs may come from the data",
        "zh": "这些订单数据不是这次运行当时看到的：不同的结果可能来自数据",
    },
    "replay.tool_gone": {"en": "the tool {name} no longer exists", "zh": "工具 {name} 已不存在"},
    "replay.tool_changed": {
        "en": "the tool {name} changed since the run (version {was} → {now})",
        "zh": "工具 {name} 在这次运行之后变了（版本 {was} → {now}）",
    },
    # ---- orderbot orders ------------------------------------------------------------------------
    "orders.is_sqlite": {
        "en": "{path} is a SQLite database, not a JSON orders file: pass --orders {url}",
        "zh": "{path} 是 SQLite 数据库，不是 JSON 订单文件：请用 --orders {url}",
    },
    "orders.no_such_file": {"en": "{path}: no such file", "zh": "{path}：没有这个文件"},
    "orders.unreadable": {"en": "{path}: cannot be read ({reason})", "zh": "{path}：无法读取（{reason}）"},
    "orders.none": {"en": "No orders match.", "zh": "没有符合条件的订单。"},
    "orders.more": {"en": "More orders: --offset {offset}", "zh": "还有更多订单：--offset {offset}"},
    "orders.imported": {
        "en": "Imported {count:,} orders from {source} into {target} in {seconds:.1f} s.",
        "zh": "已把 {source} 中的 {count:,} 个订单导入 {target}，用时 {seconds:.1f} 秒。",
    },
    "orders.imported_shop": {
        "en": "Imported {products:,} products, {users:,} customers and {orders:,} orders from {source} into {target} "
        "in {seconds:.1f} s.",
        "zh": "已把 {source} 中的 {products:,} 个商品、{users:,} 位顾客和 {orders:,} 个订单导入 {target}，"
        "用时 {seconds:.1f} 秒。",
    },
    "orders.importing_count": {
        "en": "Importing into {target}: {count:,} orders so far",
        "zh": "正在导入 {target}：已导入 {count:,} 个订单",
    },
    "orders.export_unreadable": {
        "en": "{source}: the shop could not be read to the end (a row orderbot did not write, or a database "
        "error: {log} says which); nothing was written to {target}",
        "zh": "{source}：无法完整读取该商店（有一行不是 orderbot 写入的，或数据库出错：详见 {log}）；"
        "{target} 没有写入任何内容",
    },
    "orders.store_unreadable": {
        "en": "{source}: the orders could not be read (a row orderbot did not write, or a database error: "
        "{log} says which)",
        "zh": "{source}：无法读取订单（有一行不是 orderbot 写入的，或数据库出错：详见 {log}）",
    },
    "orders.exported": {
        "en": "Exported {products:,} products, {users:,} customers and {orders:,} orders from {source} to {target}.",
        "zh": "已把 {source} 中的 {products:,} 个商品、{users:,} 位顾客和 {orders:,} 个订单导出到 {target}。",
    },
    "orders.validating": {"en": "Reading and validating {path} …", "zh": "正在读取并校验 {path} …"},
    "orders.importing": {"en": "Importing into {target}", "zh": "正在导入 {target}"},
    "orders.to_is_a_file": {
        "en": "--to takes sqlite:///path/to/shop.db or postgresql://user@host/db, not the file {path}",
        "zh": "--to 需要 sqlite:///path/to/shop.db 或 postgresql://user@host/db，而不是文件 {path}",
    },
    "orders.encode_password": {
        "en": " (a / ? # or @ in the user name or password must be percent-encoded, / as %2F)",
        "zh": "（用户名或密码中的 / ? # @ 必须用百分号编码，例如 / 写成 %2F）",
    },
    "orders.import_failed": {
        "en": "the import failed and nothing was written ({reason})",
        "zh": "导入失败，没有写入任何数据（{reason}）",
    },
    "orders.import_lost": {
        "en": "the connection to the server was lost during the import; nothing was written (the transaction "
        "was rolled back), so the import can simply be run again",
        "zh": "导入过程中与服务器的连接断开了；没有写入任何数据（事务已回滚），可以直接重新导入",
    },
    "orders.import_lost_at_commit": {
        "en": "the connection to the server was lost while the import was being committed, so it may or may not "
        "have been written; check with: orderbot orders list --all --orders {target}",
        "zh": "提交导入时与服务器的连接断开了，数据可能已写入也可能没有；请用以下命令检查："
        "orderbot orders list --all --orders {target}",
    },
    # orders list's headings and orders show's field names (orderbot/ui/orders.py); the data stays as it is
    # ---- orders list and orders show on the retail shop (orderbot.ui.orders) --------------------
    "retail_orders.heading.order": {"en": "order", "zh": "订单"},
    "retail_orders.heading.customer": {"en": "customer", "zh": "客户"},
    "retail_orders.heading.status": {"en": "status", "zh": "状态"},
    "retail_orders.heading.items": {"en": "items", "zh": "商品数"},
    "retail_orders.heading.paid": {"en": "paid", "zh": "已付"},
    "retail_orders.field.order_id": {"en": "order", "zh": "订单号"},
    "retail_orders.field.customer": {"en": "customer", "zh": "客户"},
    "retail_orders.field.status": {"en": "status", "zh": "状态"},
    "retail_orders.field.address": {"en": "address", "zh": "地址"},
    "retail_orders.field.cancel_reason": {"en": "cancel reason", "zh": "取消原因"},
    "retail_orders.field.exchange_items": {"en": "items to exchange", "zh": "要换的商品"},
    "retail_orders.field.exchange_new_items": {"en": "exchanged for", "zh": "换成"},
    "retail_orders.field.exchange_payment_method_id": {"en": "exchange paid with", "zh": "换货付款方式"},
    "retail_orders.field.exchange_price_difference": {"en": "exchange price difference", "zh": "换货差价"},
    "retail_orders.field.return_items": {"en": "items to return", "zh": "要退的商品"},
    "retail_orders.field.return_payment_method_id": {"en": "refund to", "zh": "退款到"},
    "retail_orders.item": {
        "en": "item: {name} ({item_id}) · {options} · {price}",
        "zh": "商品：{name}（{item_id}）· {options} · {price}",
    },
    "retail_orders.fulfilment": {
        "en": "fulfilment: tracking {tracking} · items {items}",
        "zh": "发货：运单 {tracking} · 商品 {items}",
    },
    "retail_orders.payment": {"en": "{kind}: {amount} · {method}", "zh": "{kind}：{amount} · {method}"},
    # the `{kind}` of a payment line: tau2's transaction_type
    "retail_orders.payment_kind": {"en": "payment", "zh": "付款"},
    "retail_orders.refund": {"en": "refund", "zh": "退款"},
    "orders.heading.order": {"en": "order", "zh": "订单"},
    "orders.heading.customer": {"en": "customer", "zh": "客户"},
    "orders.heading.status": {"en": "status", "zh": "状态"},
    "orders.heading.total": {"en": "total", "zh": "合计"},
    "orders.heading.created": {"en": "created", "zh": "下单时间"},
    "orders.field": {"en": "{label}: {value}", "zh": "{label}：{value}"},
    "orders.field.order_id": {"en": "order_id", "zh": "订单号"},
    "orders.field.customer_id": {"en": "customer_id", "zh": "客户"},
    "orders.field.status": {"en": "status", "zh": "状态"},
    "orders.field.total": {"en": "total", "zh": "合计"},
    "orders.field.created_at": {"en": "created_at", "zh": "下单时间"},
    "orders.field.updated_at": {"en": "updated_at", "zh": "更新时间"},
    "orders.field.shipping.carrier": {"en": "shipping.carrier", "zh": "物流公司"},
    "orders.field.shipping.tracking_number": {"en": "shipping.tracking_number", "zh": "运单号"},
    "orders.field.shipping.city": {"en": "shipping.city", "zh": "所在城市"},
    "orders.field.note": {"en": "note", "zh": "备注"},
    "orders.field.cancelled_at": {"en": "cancelled_at", "zh": "取消时间"},
    "orders.field.cancel_reason": {"en": "cancel_reason", "zh": "取消原因"},
    "orders.item": {
        "en": "item: {name} ({sku}) × {quantity} @ {price}",
        "zh": "商品：{name}（{sku}）× {quantity}，单价 {price}",
    },
    "orders.user_and_all": {"en": "--user and --all cannot be used together", "zh": "--user 和 --all 不能同时使用"},
    "orders.whose": {
        "en": "say whose orders: --user C001 for a customer's own, or --all for every customer's",
        "zh": "请说明是谁的订单：--user C001 查看这位客户自己的订单，--all 查看所有客户的订单",
    },
    "orders.no_access": {
        "en": "{order_id}: no order with this id belongs to {user}",
        "zh": "{order_id}：没有属于 {user} 的这个订单",
    },
    "orders.replay_needs_json": {
        "en": "replay works on a scratch copy of a JSON orders file, not on {source}; pass --orders with a JSON file",
        "zh": "replay 只能在 JSON 订单文件的临时副本上运行，不能用 {source}；请用 --orders 指定一个 JSON 文件",
    },
    # ---- a shop's files and stores, as the one error line (after "orderbot: ") -------------------
    # The sample shop's orders file (orderbot/shops/sample/stores/jsonfile.py); {error} is what
    # pydantic found (pydantic.*), {more} the count of the other problems (error.and_more).
    "orders.not_an_object": {
        "en": '{path}: expected an object like {{"orders": [...]}}, {error}{more}',
        "zh": '{path}：应为形如 {{"orders": [...]}} 的对象，{error}{more}',
    },
    "orders.not_a_list": {
        "en": '{path}: expected {{"orders": [...]}}: {where}: {error}{more}',
        "zh": '{path}：应为 {{"orders": [...]}}：{where}：{error}{more}',
    },
    "orders.bad_field": {
        "en": "{path}: {where}, field {field}: {error}{more}",
        "zh": "{path}：{where}的字段 {field}：{error}{more}",
    },
    "orders.where_order": {"en": "order #{number}", "zh": "第 {number} 个订单"},
    "orders.where_order_id": {"en": "order #{number} ({order_id})", "zh": "第 {number} 个订单（{order_id}）"},
    "orders.the_order_itself": {"en": "the order itself", "zh": "订单本身"},
    "orders.expected_order_id": {
        "en": "an order id is ORD- and up to 28 ASCII letters, digits, - or _",
        "zh": "订单号应以 ORD- 开头，后面是最多 28 个 ASCII 字母、数字、- 或 _",
    },
    "orders.expected_customer_id": {
        "en": "a customer id is 1 to 32 ASCII letters, digits or . _ - @, starting with a letter or digit",
        "zh": "客户编号是 1 到 32 个 ASCII 字母、数字或 . _ - @，以字母或数字开头",
    },
    "orders.expected_text": {"en": "text may not contain a NUL character", "zh": "文字中不能有 NUL 字符"},
    "orders.repeated_id": {
        "en": "{path}: order #{number} repeats the id {order_id}",
        "zh": "{path}：第 {number} 个订单的订单号 {order_id} 与前面的重复",
    },
    "error.and_more": {"en": " (and {more})", "zh": "（{more}）"},
    "count.more_problem": {"en": "{count} more problem|{count} more problems", "zh": "另有 {count} 处问题"},
    # The retail shop's file (orderbot/shops/retail/data.py, stream.py)
    "retail.not_a_shop": {
        "en": '{path}: expected an object like {{"products": ..., "users": ..., "orders": ...}}',
        "zh": '{path}：应为形如 {{"products": ..., "users": ..., "orders": ...}} 的对象',
    },
    "retail.bad_field": {"en": "{path}: {where}: {error}{more}", "zh": "{path}：{where}：{error}{more}"},
    "retail.the_shop": {"en": "the shop", "zh": "整个商店"},
    "retail.bad_id": {
        "en": "an id is plain text without a space at either end",
        "zh": "编号应为纯文字，两端不能有空格",
    },
    "retail.bad_text": {
        "en": "must be plain text: no control or format characters",
        "zh": "应为纯文字：不能有控制字符或格式字符",
    },
    "retail.record_id_differs": {
        "en": "{path}: {section}.{key}: the record's id is {found}, not {expected}",
        "zh": "{path}：{section}.{key}：记录的编号是 {found}，不是 {expected}",
    },
    "retail.item_id_differs": {
        "en": "{path}: {where}: item_id differs from the key",
        "zh": "{path}：{where}：item_id 与它的键不同",
    },
    "retail.payment_id_differs": {
        "en": "{path}: users.{user}.payment_methods.{key}: id differs from the key",
        "zh": "{path}：users.{user}.payment_methods.{key}：编号与它的键不同",
    },
    "retail.unknown_user": {
        "en": "{path}: orders.{order}: user {user} is not in the shop",
        "zh": "{path}：orders.{order}：商店中没有用户 {user}",
    },
    "retail.repeated_key": {
        "en": "{path}: {section}.{key}: this id appears twice",
        "zh": "{path}：{section}.{key}：这个编号出现了两次",
    },
    "retail.not_tau2": {
        "en": "{path}: not a tau2-shaped shop in the shape the JSON store reads",
        "zh": "{path}：不是 JSON 商店能读取的 tau2 格式商店",
    },
    # Why bytes are not text (orderbot.text.decode_error): Python's own wording, its parts as
    # placeholders; {codec} is the encoding's name (utf-8)
    "decode.byte": {
        "en": "'{codec}' codec can't decode byte {byte} in position {position}: {reason}",
        "zh": "第 {position} 个字节 {byte} 不是有效的 {codec} 编码：{reason}",
    },
    "decode.bytes": {
        "en": "'{codec}' codec can't decode bytes in position {start}-{end}: {reason}",
        "zh": "第 {start} 到 {end} 个字节不是有效的 {codec} 编码：{reason}",
    },
    "decode.reason.invalid_start_byte": {"en": "invalid start byte", "zh": "无效的起始字节"},
    "decode.reason.invalid_continuation_byte": {"en": "invalid continuation byte", "zh": "无效的后续字节"},
    "decode.reason.unexpected_end_of_data": {"en": "unexpected end of data", "zh": "数据在字符中间就结束了"},
    "decode.reason.truncated_data": {"en": "truncated data", "zh": "数据被截断了"},
    # Where the orders are and what they hold (orderbot/shops/source.py, choice.py, the stores)
    "orders.at": {"en": "{where}: {why}", "zh": "{where}：{why}"},
    "orders.bad_sqlite_url": {
        "en": "{source}: write a SQLite database as sqlite:///path/to/shop.db",
        "zh": "{source}：SQLite 数据库请写成 sqlite:///path/to/shop.db",
    },
    "orders.unknown_source": {
        "en": "{source}: unknown kind of orders source; use a JSON file path, sqlite:///path/to/shop.db or "
        "postgresql://user@host/db",
        "zh": "{source}：无法识别的订单来源；请用 JSON 文件路径、sqlite:///path/to/shop.db 或 postgresql://user@host/db",
    },
    "orders.not_sqlite": {
        "en": "{path}: cannot be opened as a SQLite database ({reason})",
        "zh": "{path}：无法作为 SQLite 数据库打开（{reason}）",
    },
    "orders.no_sqlite_database": {
        "en": "{path}: no such SQLite database (create it with: orderbot orders import {file} --to {url})",
        "zh": "{path}：没有这个 SQLite 数据库（请这样创建：orderbot orders import {file} --to {url}）",
    },
    "orders.no_schema": {
        "en": "{where}: holds no orderbot orders (no schema_version table); import them with: orderbot orders "
        "import orders.json --to {url}",
        "zh": "{where}：没有 orderbot 的订单（没有 schema_version 表）；请这样导入：orderbot orders "
        "import orders.json --to {url}",
    },
    "orders.cannot_read": {
        "en": "{source}: cannot read the orders ({reason})",
        "zh": "{source}：无法读取订单（{reason}）",
    },
    "orders.schema_version": {
        "en": "{where}: orders schema version {found}, and this orderbot reads version {reads}; import the orders "
        "again with --replace",
        "zh": "{where}：订单的结构版本是 {found}，而这个 orderbot 读取的是版本 {reads}；请用 --replace 重新导入订单",
    },
    "orders.schema_none": {"en": "none", "zh": "无"},
    "orders.holds_orders": {
        "en": "{where} already holds {held:,} orders; pass --replace to replace them",
        "zh": "{where} 中已有 {held:,} 个订单；要替换它们请加 --replace",
    },
    "orders.holds_other_shop": {
        "en": "{where} already holds another shop (table {table}); pass --replace to replace it",
        "zh": "{where} 中已有另一个商店（表 {table}）；要替换它请加 --replace",
    },
    "orders.bad_postgres_url": {
        "en": "{source}: not a valid PostgreSQL URL (postgresql://user@host:5432/db)",
        "zh": "{source}：不是有效的 PostgreSQL URL（postgresql://user@host:5432/db）",
    },
    "orders.needs_psycopg": {
        "en": "PostgreSQL orders need psycopg, which is not installed: {command}",
        "zh": "PostgreSQL 订单需要 psycopg，但它没有安装：{command}",
    },
    "runs.needs_psycopg": {
        "en": "A PostgreSQL run store needs psycopg, which is not installed: {command}",
        "zh": "PostgreSQL 运行存储需要 psycopg，但它没有安装：{command}",
    },
    "orders.pg_refused": {
        "en": "the server refused the user name or password",
        "zh": "服务器拒绝了这个用户名或密码",
    },
    "orders.pg_no_database": {"en": "no such database on that server", "zh": "那台服务器上没有这个数据库"},
    "orders.pg_nothing_answers": {
        "en": "cannot connect: nothing answers at that host and port (is the server running?)",
        "zh": "无法连接：那个主机和端口没有回应（服务器在运行吗？）",
    },
    "orders.pg_timeout": {
        "en": "cannot connect: no answer within {seconds} s",
        "zh": "无法连接：{seconds} 秒内没有回应",
    },
    "orders.pg_unknown_host": {"en": "cannot connect: unknown host name", "zh": "无法连接：主机名无法识别"},
    "orders.pg_cannot_connect": {
        "en": "cannot connect to the PostgreSQL server",
        "zh": "无法连接到 PostgreSQL 服务器",
    },
    # The retail shop in a database and its export (orderbot/shops/retail/)
    "retail.shop_unreadable": {
        "en": "{source}: cannot read the shop ({reason})",
        "zh": "{source}：无法读取商店（{reason}）",
    },
    "retail.holds_sample": {
        "en": "{source}: holds the sample shop's orders, not a retail shop in tau2's shape",
        "zh": "{source}：存放的是示例商店的订单，不是 tau2 格式的零售商店",
    },
    "retail.no_schema": {
        "en": "{where}: holds no retail shop (no {table} table); import one with: orderbot orders import db.json "
        "--to {url}",
        "zh": "{where}：没有零售商店（没有 {table} 表）；请这样导入：orderbot orders import db.json --to {url}",
    },
    "retail.schema_version": {
        "en": "{where}: retail shop schema version {found}, and this orderbot reads version {reads}; import the "
        "shop again with --replace",
        "zh": "{where}：零售商店的结构版本是 {found}，而这个 orderbot 读取的是版本 {reads}；"
        "请用 --replace 重新导入商店",
    },
    "retail.holds": {
        "en": "{where} already holds {held}; pass --replace to replace them",
        "zh": "{where} 中已有 {held}；要替换它们请加 --replace",
    },
    "retail.held_retail": {"en": "{count:,} retail orders", "zh": "{count:,} 个零售订单"},
    "retail.held_sample": {"en": "{count:,} orders of the sample shop", "zh": "示例商店的 {count:,} 个订单"},
    "retail.held_both": {"en": "{first} and {second}", "zh": "{first}和{second}"},
    "retail.export_onto_source": {
        "en": "{path}: is the shop being exported; write the export to another file",
        "zh": "{path}：就是正在导出的商店；请导出到另一个文件",
    },
    "retail.export_unwritable": {
        "en": "{path}: cannot be written ({reason}); nothing was written",
        "zh": "{path}：无法写入（{reason}）；没有写入任何内容",
    },
    "retail.no_customer": {
        "en": "{source}: no customer {user} in this shop (the user id, such as sara_doe_496)",
        "zh": "{source}：这个商店中没有客户 {user}（请用用户编号，例如 sara_doe_496）",
    },
    # A run that cannot be replayed or was altered (orderbot/runner/replay.py, orderbot/runs/sql.py)
    "runs.cannot_replay_dropped": {
        "en": "run {run_id} dropped some model turns to stay bounded; it cannot be replayed",
        "zh": "运行 {run_id} 为了控制大小丢弃了一些模型回合；无法重放",
    },
    "runs.cannot_replay_empty": {
        "en": "run {run_id} has no recorded segments; it cannot be replayed",
        "zh": "运行 {run_id} 没有记录任何片段；无法重放",
    },
    "runs.record_altered": {
        "en": "the record of run {run_id} was altered: {reason}; it will not be resumed or replayed",
        "zh": "运行 {run_id} 的记录被改动过：{reason}；不会被恢复或重放",
    },
    "runs.no_tag": {"en": "it carries no integrity tag", "zh": "它没有完整性标记"},
    "runs.tag_mismatch": {
        "en": "its integrity tag does not match (edited, or copied from {elsewhere})",
        "zh": "它的完整性标记不匹配（被编辑过，或是从{elsewhere}复制来的）",
    },
    "runs.elsewhere_state_dir": {"en": "another state directory", "zh": "另一个状态目录"},
    "runs.elsewhere_store": {"en": "another run store", "zh": "另一个运行存储"},
    "runs.other_run_inside": {
        "en": "the run inside is {found}, not {run_id}",
        "zh": "里面的运行是 {found}，不是 {run_id}",
    },
    "runs.record_in": {"en": "{where} run {run_id}", "zh": "{where} 中的运行 {run_id}"},
    # A run record as a file (orderbot/runs/store.py)
    "runs.key_unreadable": {
        "en": "{path}: the record key cannot be read ({reason})",
        "zh": "{path}：无法读取记录密钥（{reason}）",
    },
    "runs.key_file_damaged": {
        "en": "{path}: the record key is damaged; remove it (records made with it will be refused)",
        "zh": "{path}：记录密钥已损坏；请删除它（用它做的记录将被拒绝）",
    },
    "runs.key_not_created": {
        "en": "{path}: the record key cannot be created ({reason})",
        "zh": "{path}：无法创建记录密钥（{reason}）",
    },
    "runs.no_such_record": {"en": "{path}: no such run record", "zh": "{path}：没有这条运行记录"},
    "runs.record_unreadable": {"en": "{path}: cannot be read ({reason})", "zh": "{path}：无法读取（{reason}）"},
    "runs.not_a_record": {"en": "{path}: not an orderbot run record", "zh": "{path}：不是 orderbot 的运行记录"},
    "runs.version_unsupported": {
        "en": "{path}: run record version {version} is not supported (this orderbot reads {reads})",
        "zh": "{path}：不支持运行记录版本 {version}（这个 orderbot 读取的是版本 {reads}）",
    },
    "runs.unknown_shop": {
        "en": "the run record names a shop orderbot does not have: {shop!r}",
        "zh": "运行记录中的商店 orderbot 没有：{shop!r}",
    },
    "runs.record_damaged": {
        "en": "{path}: the run record is damaged ({where}: {what})",
        "zh": "{path}：运行记录已损坏（{where}：{what}）",
    },
    "runs.the_record": {"en": "record", "zh": "记录"},
    # ---- usage errors (a flag, an argument, a command; orderbot.cli says each in one line) --------
    # One line for every usage error (orderbot.cli.usage_error), after "orderbot: ".
    "usage.line": {"en": "{error} (see '{command} --help')", "zh": "{error}（见 {command} --help）"},
    "usage.prefix": {"en": "Usage: ", "zh": "用法："},
    "usage.options": {"en": "OPTIONS", "zh": "选项"},
    "usage.command": {"en": "COMMAND", "zh": "命令"},
    "usage.args": {"en": "ARGS", "zh": "参数"},
    "usage.no_such_option": {"en": "no such option: {name}", "zh": "没有 {name} 这个选项"},
    "usage.did_you_mean": {"en": " (did you mean {options}?)", "zh": "（是不是想用 {options}？）"},
    "usage.missing": {"en": "missing {kind} {name}", "zh": "缺少{kind} {name}"},
    "usage.kind_argument": {"en": "argument", "zh": "参数"},
    "usage.kind_option": {"en": "option", "zh": "选项"},
    "usage.kind_parameter": {"en": "parameter", "zh": "参数"},
    "usage.bad_value": {"en": "invalid value for {name}: {why}", "zh": "{name} 的值无效：{why}"},
    "usage.no_such_command": {"en": "no such command {name}", "zh": "没有 {name} 这个命令"},
    "usage.needs_value": {"en": "{name} needs a value", "zh": "{name} 需要一个值"},
    "usage.takes_no_value": {"en": "{name} takes no value", "zh": "{name} 不带值"},
    # what Click said, where it carries nothing to say it from: its own words, behind orderbot's
    "usage.click": {"en": "{error}", "zh": "命令行有误：{error}"},
    # ---- settings and their errors (orderbot.settings; after "orderbot: ") ----------------------
    "settings.audit_key_twice": {
        "en": "set the audit key by ORDERBOT_AUDIT_KEY or by ORDERBOT_AUDIT_KEY_FILE, not both",
        "zh": "审计密钥请用 ORDERBOT_AUDIT_KEY 或 ORDERBOT_AUDIT_KEY_FILE 之一设置，不要两个都设",
    },
    "settings.audit_key_file_open": {
        "en": "the audit key file {path} can be read by others: make it private (chmod 600)",
        "zh": "审计密钥文件 {path} 其他人也能读取：请把它设为私有（chmod 600）",
    },
    "settings.audit_key_file_unreadable": {
        "en": "cannot read the audit key file {path}: {why}",
        "zh": "无法读取审计密钥文件 {path}：{why}",
    },
    "settings.audit_key_short": {
        "en": "the audit key in {where} is shorter than {least} characters: make one with {command}",
        "zh": "{where} 中的审计密钥短于 {least} 个字符：可以用 {command} 生成一个",
    },
    "settings.bad_value": {"en": "invalid value for {source}: {why}", "zh": "{source} 的值无效：{why}"},
    "settings.bad_base_url": {
        "en": "invalid base URL from {source}: {why}",
        "zh": "{source} 给出的基础 URL 无效：{why}",
    },
    "settings.in_environment": {"en": "{name} in the environment", "zh": "环境变量 {name}"},
    "settings.in_dotenv": {"en": "{name} in ./.env", "zh": "./.env 中的 {name}"},
    "repl.not_a_limit": {
        "en": "{word} is not a limit: use steps=N, timeout=SECONDS, calls=N or per-step=N",
        "zh": "{word} 不是上限：请用 steps=N、timeout=秒数、calls=N 或 per-step=N",
    },
    # ---- what a value failed (pydantic's kinds of error, and orderbot's own; orderbot.text) ------
    # Lower-case, to follow a colon; the English is pydantic's own wording.
    "pydantic.int_parsing": {
        "en": "input should be a valid integer, unable to parse string as an integer",
        "zh": "应为整数，无法把它读成整数",
    },
    "pydantic.int_from_float": {
        "en": "input should be a valid integer, got a number with a fractional part",
        "zh": "应为整数，不能带小数部分",
    },
    "pydantic.int_type": {"en": "input should be a valid integer", "zh": "应为整数"},
    "pydantic.float_parsing": {
        "en": "input should be a valid number, unable to parse string as a number",
        "zh": "应为数字，无法把它读成数字",
    },
    "pydantic.float_type": {"en": "input should be a valid number", "zh": "应为数字"},
    "pydantic.finite_number": {"en": "input should be a finite number", "zh": "应为有限的数字"},
    "pydantic.greater_than_equal": {"en": "input should be greater than or equal to {ge}", "zh": "应大于或等于 {ge}"},
    "pydantic.greater_than": {"en": "input should be greater than {gt}", "zh": "应大于 {gt}"},
    "pydantic.less_than_equal": {"en": "input should be less than or equal to {le}", "zh": "应小于或等于 {le}"},
    "pydantic.less_than": {"en": "input should be less than {lt}", "zh": "应小于 {lt}"},
    "pydantic.string_too_long": {
        "en": "string should have at most {max_length} characters",
        "zh": "最多 {max_length} 个字符",
    },
    "pydantic.string_too_short": {
        "en": "string should have at least {min_length} characters",
        "zh": "至少 {min_length} 个字符",
    },
    "pydantic.too_short": {
        "en": "the number of entries should be at least {min_length}, not {actual_length}",
        "zh": "至少要有 {min_length} 项，而不是 {actual_length} 项",
    },
    "pydantic.too_long": {
        "en": "the number of entries should be at most {max_length}, not {actual_length}",
        "zh": "最多只能有 {max_length} 项，而不是 {actual_length} 项",
    },
    "pydantic.string_type": {"en": "input should be a valid string", "zh": "应为文字"},
    "pydantic.missing": {"en": "field required", "zh": "缺少这一项"},
    "pydantic.extra_forbidden": {"en": "extra inputs are not permitted", "zh": "不允许多余的字段"},
    "pydantic.bool_parsing": {
        "en": "input should be a valid boolean, unable to interpret input",
        "zh": "应为布尔值（true 或 false），无法识别",
    },
    "pydantic.bool_type": {"en": "input should be a valid boolean", "zh": "应为布尔值（true 或 false）"},
    "pydantic.literal_error": {"en": "input should be {expected}", "zh": "应为 {expected}"},
    "pydantic.enum": {"en": "input should be {expected}", "zh": "应为 {expected}"},
    "pydantic.dict_type": {"en": "input should be a valid dictionary", "zh": "应为一个 JSON 对象"},
    "pydantic.json_invalid": {"en": "invalid JSON: {error}", "zh": "不是有效的 JSON：{error}"},
    "pydantic.list_type": {"en": "input should be a valid list", "zh": "应为一个列表"},
    "pydantic.user_id": {
        "en": "use 1 to 64 letters, digits or . _ - @, starting with a letter or digit (e.g. C001)",
        "zh": "请用 1 到 64 个字母、数字或 . _ - @，以字母或数字开头（例如 C001）",
    },
    "pydantic.base_url": {
        "en": "expected an http(s) URL such as http://localhost:11434/v1",
        "zh": "应为 http(s) URL，例如 http://localhost:11434/v1",
    },
    "pydantic.model_name": {
        "en": "expected a model name in printable characters, e.g. gpt-4o-mini",
        "zh": "应为由可打印字符组成的模型名，例如 gpt-4o-mini",
    },
    # ---- what an audit entry records (orderbot.runs.audit.EVENTS), as `audit` shows it -----------
    "audit.event_proposed": {"en": "proposed", "zh": "已提议"},
    "audit.event_approved": {"en": "approved", "zh": "已批准"},
    "audit.event_rejected": {"en": "rejected", "zh": "已拒绝"},
    "audit.event_executed": {"en": "executed", "zh": "已执行"},
    "audit.event_failed": {"en": "failed", "zh": "失败"},
    # ---- the re-checks before a stored run is continued (orderbot.runs.resume) ------------------
    "resume.unsure": {
        "en": "run {run_id} stopped while an approved call ({call_id}) was being carried out; it may have been "
        "done. Check the order; this run will not be resumed",
        "zh": "运行 {run_id} 在执行一个已批准的调用（{call_id}）时停止了；它可能已经完成。请检查订单；这次运行不会继续",
    },
    "resume.killed": {
        "en": "run {run_id} did not finish cleanly (the process was killed); start a new run",
        "zh": "运行 {run_id} 没有正常结束（进程被终止）；请开始一次新的运行",
    },
    "resume.answered": {
        "en": "run {run_id} already answered; there is nothing to resume",
        "zh": "运行 {run_id} 已经回答了；没有什么可继续的",
    },
    "resume.not_resumable": {
        "en": "run {run_id} stopped with {reason}; it cannot be resumed",
        "zh": "运行 {run_id} 以 {reason} 停止；无法继续",
    },
    "resume.signed_in_other": {
        "en": "run {run_id} signed in customer {customer}, not {user}: resume it without --user; nothing was executed",
        "zh": "运行 {run_id} 登录的客户是 {customer}，不是 {user}：请不带 --user 继续；没有执行任何操作",
    },
    "resume.user": {"en": "user {user}", "zh": "用户 {user}"},
    "resume.anonymous": {"en": "an anonymous session", "zh": "匿名会话"},
    "resume.pass_user": {"en": " (pass --user)", "zh": "（请加 --user）"},
    "resume.not_yours": {
        "en": "run {run_id} belongs to {owner}, not to {asker}{hint}; nothing was executed",
        "zh": "运行 {run_id} 属于{owner}，不属于{asker}{hint}；没有执行任何操作",
    },
    "resume.tool_gone": {
        "en": "run {run_id} used the tool {tool}, which is no longer available",
        "zh": "运行 {run_id} 用过的工具 {tool} 已经不存在了",
    },
    "resume.tool_changed": {
        "en": "the tool {tool} changed since run {run_id} (version {was} → {now}); the run will not be resumed",
        "zh": "工具 {tool} 在运行 {run_id} 之后变了（版本 {was} → {now}）；这次运行不会继续",
    },
    "resume.not_waiting": {
        "en": "run {run_id} is not waiting for approval (it stopped with {reason}); drop --approve/--reject",
        "zh": "运行 {run_id} 没有在等待确认（它以 {reason} 停止）；请去掉 --approve/--reject",
    },
    "resume.waiting": {
        "en": "run {run_id} is waiting for approval: pass --approve or --reject",
        "zh": "运行 {run_id} 正在等待确认：请加 --approve 或 --reject",
    },
    "resume.carried_out": {
        "en": "{tool} ({call_id}) of run {run_id} was already carried out; it will not run again",
        "zh": "运行 {run_id} 的 {tool}（{call_id}）已经执行过了；不会再执行",
    },
    "resume.tool_changed_since_asked": {
        "en": "the tool {tool} changed since the approval was requested; the run will not be resumed",
        "zh": "工具 {tool} 在请求确认之后变了；这次运行不会继续",
    },
    "resume.mismatch": {
        "en": "the call run {run_id} waits for does not match the call the model made ({why}); "
        "the record was altered, nothing was executed",
        "zh": "运行 {run_id} 等待的调用与模型发出的调用不一致（{why}）；记录被改动过，没有执行任何操作",
    },
    "resume.future": {
        "en": "the approval request of run {run_id} is dated in the future; the record was altered, "
        "nothing was executed",
        "zh": "运行 {run_id} 的确认请求日期在未来；记录被改动过，没有执行任何操作",
    },
    "resume.expired": {
        "en": "the approval request of run {run_id} expired: it was made {hours} h ago and approvals last {ttl} h; "
        "ask again",
        "zh": "运行 {run_id} 的确认请求已过期：它是 {hours} 小时前发出的，而确认的有效期是 {ttl} 小时；请重新提问",
    },
    "resume.no_longer": {
        "en": "{action} can no longer be done: {why}; nothing was executed",
        "zh": "{action} 已经无法完成：{why}；没有执行任何操作",
    },
    "resume.no_longer_matches": {
        "en": "the approval of run {run_id} no longer matches its call; nothing was executed",
        "zh": "运行 {run_id} 的确认与它的调用已不一致；没有执行任何操作",
    },
    "resume.why_user": {"en": "its user differs from the run's", "zh": "它的用户与这次运行的不同"},
    "resume.why_version": {"en": "its tool version differs from the run's", "zh": "它的工具版本与这次运行的不同"},
    "resume.why_no_call": {"en": "the conversation has no such call", "zh": "对话中没有这个调用"},
    "resume.why_twice": {"en": "the call id appears twice", "zh": "这个调用编号出现了两次"},
    "resume.why_name": {"en": "its tool name differs", "zh": "它的工具名不同"},
    "resume.why_arguments": {"en": "its arguments differ", "zh": "它的参数不同"},
    "resume.why_settled": {"en": "it was already settled", "zh": "它已经处理过了"},
    "resume.why_turn": {"en": "the recorded model turn differs", "zh": "记录的模型回合不同"},
    "resume.orders_gone": {
        "en": "the orders source run {run_id} used, {source}, is gone; pass --orders to name the one to act on",
        "zh": "运行 {run_id} 用过的订单数据 {source} 已经不在了；请用 --orders 指定要操作的订单数据",
    },
    "resume.orders_replaced": {
        "en": "{source} is not the orders file run {run_id} used (its directory was replaced or moved); "
        "pass --orders {source} if it is the one to act on",
        "zh": "{source} 不是运行 {run_id} 用过的订单文件（它所在的目录被替换或移动过）；"
        "如果就是要操作它，请加 --orders {source}",
    },
    # ---- errors (after "orderbot: ") ---------------------------------------------------------------
    # ---- what a tool says when it refuses (orderbot.ui.trace shows it in the UI language) ------
    # The model always gets the English: these are the shops' and dispatch's own sentences.
    "tool_error.no_access": {
        "en": "no order with this id belongs to the signed-in customer; nothing about it can be shown or changed",
        "zh": "已登录的客户没有这个订单号的订单；它的任何信息都不能查看或更改",
    },
    "tool_error.not_in_shop": {
        "en": "the signed-in customer is not in this shop; nothing about them can be shown or changed",
        "zh": "已登录的客户不在这个商店中；他们的任何信息都不能查看或更改",
    },
    "tool_error.one_customer": {
        "en": "these details are not the signed-in customer's: a conversation is about one customer only; "
        "nothing about anyone else can be shown or changed",
        "zh": "这些信息不属于已登录的客户：一次对话只涉及一位客户；其他任何人的信息都不能查看或更改",
    },
    "tool_error.sign_in": {
        "en": "this needs a signed-in user: sign in with --user",
        "zh": "这需要已登录的用户：请用 --user 登录",
    },
    "tool_error.sign_in_or_find": {
        "en": "this needs a signed-in customer: sign in with --user, or find the customer first with {lookups}",
        "zh": "这需要已登录的客户：请用 --user 登录，或先用 {lookups} 找到这位客户",
    },
    "tool_error.unknown_tool": {"en": "tool {name} is not available", "zh": "没有 {name} 这个工具"},
    "tool_error.invalid_json": {"en": "arguments are not valid JSON", "zh": "参数不是有效的 JSON"},
    "tool_error.internal": {
        "en": "the tool failed unexpectedly; the error was logged",
        "zh": "工具意外出错；错误已记入日志",
    },
    "tool_error.rejected": {
        "en": "the person did not approve this action; nothing was done",
        "zh": "这个操作没有得到批准；什么也没有做",
    },
    "tool_error.sample_read_only": {
        "en": "the orders bundled with orderbot are a read-only sample; nothing was changed. "
        "Pass --orders with your own orders file to make changes",
        "zh": "orderbot 自带的订单是只读示例；没有做任何更改。要更改订单，请用 --orders 指定你自己的订单文件",
    },
    "tool_error.shop_read_only": {
        "en": "this shop was opened read-only; nothing was changed",
        "zh": "这个商店是以只读方式打开的；没有做任何更改",
    },
    "tool_error.not_cancellable": {
        "en": "order {order_id} is {status}; only orders that are {allowed} can be cancelled",
        "zh": "订单 {order_id} 的状态是{status}；只有 {allowed} 的订单可以取消",
    },
    "tool_error.write_failed": {
        "en": "the change could not be saved; nothing was changed",
        "zh": "更改无法保存；没有做任何更改",
    },
    "tool_error.orders_db_unavailable": {
        "en": "the orders database cannot be used right now; nothing was changed",
        "zh": "订单数据库现在无法使用；没有做任何更改",
    },
    "tool_error.orders_db_timed_out": {
        "en": "the orders database did not answer within the run's time limit; nothing was changed",
        "zh": "订单数据库没有在本次运行的时间上限内响应；没有做任何更改",
    },
    "tool_error.orders_db_busy": {
        "en": "the orders database is busy with another change; nothing was changed, try again",
        "zh": "订单数据库正忙于另一项更改；没有做任何更改，请重试",
    },
    "tool_error.shop_db_unavailable": {
        "en": "the shop's database cannot be used right now; nothing was changed",
        "zh": "商店数据库现在无法使用；没有做任何更改",
    },
    "tool_error.shop_db_timed_out": {
        "en": "the shop's database did not answer within the run's time limit; nothing was changed",
        "zh": "商店数据库没有在本次运行的时间上限内响应；没有做任何更改",
    },
    "tool_error.shop_db_busy": {
        "en": "the shop's database is busy with another change; nothing was changed, try again",
        "zh": "商店数据库正忙于另一项更改；没有做任何更改，请重试",
    },
    "tool_error.changed_meanwhile": {
        "en": "the record changed after it was read, before this change could be saved; nothing was changed",
        "zh": "这条记录在读取之后、保存这次更改之前被改动了；没有做任何更改",
    },
    "tool_error.no_such_product": {
        "en": "there is no product {product_id}; a product id is not an item id",
        "zh": "没有 {product_id} 这个产品；产品编号不是商品编号",
    },
    "tool_error.no_such_item": {
        "en": "there is no item {item_id}; an item id is not a product id",
        "zh": "没有 {item_id} 这个商品；商品编号不是产品编号",
    },
    "tool_error.user_not_found": {"en": "no customer matches these details", "zh": "没有客户与这些信息相符"},
    "tool_error.not_your_payment_method": {
        "en": "{payment_method_id} is not one of the customer's payment methods",
        "zh": "{payment_method_id} 不是这位客户的支付方式",
    },
    "tool_error.no_items": {"en": "name at least one item of the order", "zh": "请至少指定订单中的一件商品"},
    "tool_error.same_item": {
        "en": "item {item_id} would be changed to itself; choose another option",
        "zh": "商品 {item_id} 会被换成它自己；请选另一个选项",
    },
    "tool_error.variant_unavailable": {
        "en": "item {item_id} ({name}) is not available",
        "zh": "商品 {item_id}（{name}）目前无货",
    },
    "tool_error.same_payment_method": {
        "en": "order {order_id} is already paid with {payment_method_id}",
        "zh": "订单 {order_id} 已经是用 {payment_method_id} 支付的",
    },
    "tool_error.not_one_payment": {
        "en": "order {order_id} has more than its one payment; its payment method cannot be changed",
        "zh": "订单 {order_id} 不止一笔付款；它的支付方式不能更改",
    },
    "error.unknown_provider": {
        "en": "unknown provider {name}: choose one of {choices}",
        "zh": "没有 {name} 这个模型提供方：请从 {choices} 中选一个",
    },
    "error.needs_api_key": {
        "en": "the {provider} provider needs an API key: set OPENAI_API_KEY "
        "(or pass --base-url for a local OpenAI-compatible server)",
        "zh": "{provider} 提供方需要 API 密钥：请设置 OPENAI_API_KEY（本地的 OpenAI 兼容服务器请用 --base-url 指定）",
    },
    # ---- the model service, as the providers classify its failures (orderbot/models/) -------------
    "model.no_answer_in_time": {"en": "the model service did not answer in time", "zh": "模型服务没有及时回答"},
    "model.unreachable": {
        "en": "could not reach the model service at {where}",
        "zh": "无法连接 {where} 的模型服务",
    },
    "model.stream_broke": {
        "en": "the connection broke while the reply was streaming",
        "zh": "回复流式传输期间连接断开了",
    },
    "model.not_json": {
        "en": "the model service sent a reply that is not valid JSON",
        "zh": "模型服务发来的回复不是有效的 JSON",
    },
    "model.failed_unexpectedly": {
        "en": "the model request failed unexpectedly ({kind})",
        "zh": "模型请求意外失败（{kind}）",
    },
    "model.quota": {
        "en": "the API quota is used up (HTTP 429): check the plan and billing for OPENAI_API_KEY",
        "zh": "API 额度已用完（HTTP 429）：请检查 OPENAI_API_KEY 的套餐和账单",
    },
    "model.rate_limited": {"en": "rate limited (HTTP 429)", "zh": "请求过于频繁，被限流（HTTP 429）"},
    # what the server itself said, after the sentence: its own words, as they are
    "model.server_said": {"en": ": {detail}", "zh": "：{detail}"},
    "model.server_failed": {
        "en": "the model service failed (HTTP {status}){said}",
        "zh": "模型服务出错（HTTP {status}）{said}",
    },
    "model.unauthorized": {
        "en": "authentication failed (HTTP 401): check OPENAI_API_KEY",
        "zh": "身份验证失败（HTTP 401）：请检查 OPENAI_API_KEY",
    },
    "model.forbidden": {
        "en": "permission denied (HTTP 403): the API key may not use this model or endpoint",
        "zh": "没有权限（HTTP 403）：这个 API 密钥可能不能使用这个模型或接口",
    },
    "model.not_found": {"en": "not found (HTTP 404){said}; {hint}", "zh": "找不到（HTTP 404）{said}；{hint}"},
    "model.hint_model_url": {"en": "check --model and --base-url", "zh": "请检查 --model 和 --base-url"},
    "model.hint_responses_api": {
        "en": "check --model and --base-url; many local servers lack the Responses API: try --provider chat",
        "zh": "请检查 --model 和 --base-url；许多本地服务器没有 Responses API：试试 --provider chat",
    },
    "model.refused": {
        "en": "the model service refused the request (HTTP {status}){said}",
        "zh": "模型服务拒绝了这个请求（HTTP {status}）{said}",
    },
    "model.no_answer_within": {"en": "no answer within {seconds:g} s", "zh": "{seconds:g} 秒内没有回答"},
    "model.gave_up": {
        "en": "{failure}; gave up after {attempts} attempts",
        "zh": "{failure}；尝试 {attempts} 次后放弃",
    },
    "model.no_time_to_retry": {
        "en": "{failure}; no time left to retry within {seconds:g} s",
        "zh": "{failure}；{seconds:g} 秒内已没有时间重试",
    },
    "model.incomplete": {
        "en": "the model service ended the stream before the response was complete",
        "zh": "模型服务在回复完整之前就结束了数据流",
    },
    "model.error_mid_stream": {
        "en": "the model service reported an error mid-stream ({code})",
        "zh": "模型服务在数据流中途报告了错误（{code}）",
    },
    "model.stream_error": {
        "en": "the model service reported an error mid-stream",
        "zh": "模型服务在数据流中途报告了错误",
    },
    "model.failed_response": {
        "en": "the model service reported a failed response ({code})",
        "zh": "模型服务报告回复失败（{code}）",
    },
    "model.no_output": {
        "en": "the model service sent a response without an output list",
        "zh": "模型服务发来的回复没有输出列表",
    },
    "model.output_not_object": {
        "en": "the model service sent an output item that is not an object",
        "zh": "模型服务发来的输出项不是一个对象",
    },
    "model.call_without_name": {
        "en": "the model service sent a tool call without a name or call id",
        "zh": "模型服务发来的工具调用没有名称或调用编号",
    },
    "model.no_choices": {
        "en": "the model service sent a completion without choices",
        "zh": "模型服务发来的回复没有 choices",
    },
    "model.no_message": {
        "en": "the model service sent a completion without a message",
        "zh": "模型服务发来的回复没有 message",
    },
    "model.empty": {
        "en": "the model returned nothing (an empty reply with no text and no tool call)",
        "zh": "模型什么也没有返回（空回复：没有文字，也没有工具调用）",
    },
    "model.unreadable": {
        "en": "the model service sent a response that could not be read",
        "zh": "模型服务发来的回复无法读取",
    },
    "model.not_object": {
        "en": "the model service sent a reply that is not a JSON object",
        "zh": "模型服务发来的回复不是一个 JSON 对象",
    },
    "model.event_not_object": {
        "en": "the model service streamed an event that is not a JSON object",
        "zh": "模型服务在数据流中发来的事件不是一个 JSON 对象",
    },
    "model.script_ended": {"en": "the scripted model has no more turns", "zh": "脚本模型没有更多的回合了"},
    "model.bad_base_url": {
        "en": "invalid base URL {url}: expected something like http://localhost:11434/v1",
        "zh": "无效的服务器地址 {url}：应类似 http://localhost:11434/v1",
    },
    "error.prefix": {"en": "orderbot: {error}", "zh": "orderbot：{error}"},
    "error.tool_twice": {"en": "tool '{tool}' is registered twice", "zh": "工具 '{tool}' 注册了两次"},
    # a tool declared against the rules (orderbot.loop.identity): said to whoever wrote it
    "tools.identity_argument": {
        "en": "tool {tool} takes {name} from the model; identity must come from the session",
        "zh": "工具 {tool} 从模型那里接收 {name}；身份必须来自会话",
    },
    "tools.sign_in_unknown": {
        "en": "tool {tool} signs in with {name}, an argument it does not take",
        "zh": "工具 {tool} 用 {name} 登录，但它并不接受这个参数",
    },
    "tools.sign_in_with_id": {
        "en": "tool {tool} signs in with {name}: a credential is what the customer knows, never an id",
        "zh": "工具 {tool} 用 {name} 登录：凭据是客户知道的信息，绝不能是编号",
    },
    "tools.sign_in_does_more": {
        "en": "tool {tool} signs in: it cannot also change data, need a user or hand off",
        "zh": "工具 {tool} 用于登录：它不能同时更改数据、需要已登录的用户或转交人工",
    },
    # a file (orders, a shop, an eval suite) that does not parse; the error is the parser's own words
    "error.not_json": {"en": "{path}: not valid JSON: {error}", "zh": "{path}：不是有效的 JSON：{error}"},
    "error.question_missing": {
        "en": "missing the question: give it as an argument, or on standard input (echo … | orderbot ask)",
        "zh": "缺少问题：请把它作为参数给出，或从标准输入传入（echo … | orderbot ask）",
    },
    "error.search_empty": {
        "en": "--search needs some text to look for in the questions and answers",
        "zh": "--search 需要一段要在问题和回答中查找的文字",
    },
    "error.no_log_side_effect": {
        "en": "not run, as it needs approval and with --no-log there would be no record to resume "
        "(ask again without --no-log): {description}",
        "zh": "未执行：该操作需要批准，而使用 --no-log 时没有可恢复的记录（请去掉 --no-log 再问一次）：{description}",
    },
    "error.question_empty": {
        "en": 'the question is empty: say what you want to know, e.g. "查询 ORD-1001"',
        "zh": "问题是空的：请说明你想知道什么，例如 “查询 ORD-1001”",
    },
    "error.cid_other_user": {
        "en": "the conversation of run {run_id} was {user}'s: continue it with the same --user, or ask without --cid",
        "zh": "运行 {run_id} 的对话属于 {user}：请用同一个 --user 继续，或去掉 --cid 重新提问",
    },
    "error.continue_other_user": {
        "en": "the latest conversation (run {run_id}) was {user}'s: continue it with the same --user, "
        "or ask without --continue",
        "zh": "最近的对话（运行 {run_id}）属于 {user}：请用同一个 --user 继续，或去掉 --continue 重新提问",
    },
    "error.question_too_long": {
        "en": "the question is {chars:,} characters long; the limit is {limit:,}",
        "zh": "问题有 {chars:,} 个字符，上限是 {limit:,}",
    },
    "error.approve_and_reject": {
        "en": "--approve and --reject cannot be used together",
        "zh": "--approve 和 --reject 不能同时使用",
    },
    "error.bad_stop_reason": {
        "en": "invalid value for --stop-reason: {value!r} is not a stop reason; use one of {valid}",
        "zh": "--stop-reason 的值无效：{value!r} 不是停止原因；请用以下之一：{valid}",
    },
    "error.bad_lang": {
        "en": "unknown language '{value}' from {source}: use zh or en",
        "zh": "{source} 给出的语言 '{value}' 无法识别：请用 zh 或 en",
    },
    # ---- the state directory (orderbot.runs.statedir, orderbot.runs.store) -----------------------
    "state.not_a_directory": {
        "en": "the state directory {path} is not a directory: point --state-dir or ORDERBOT_STATE_DIR at a directory",
        "zh": "状态目录 {path} 不是目录：请用 --state-dir 或 ORDERBOT_STATE_DIR 指向一个目录",
    },
    "state.planted": {
        "en": "{path} is not a regular file (a link, a FIFO or a folder), and orderbot keeps its runs there: "
        "move it away and try again",
        "zh": "{path} 不是普通文件（而是链接、命名管道或目录），orderbot 在这里保存运行记录：请把它移走后再试",
    },
    "state.unusable": {"en": "{path} cannot be used ({reason})", "zh": "{path} 无法使用（{reason}）"},
    "state.cannot_create": {
        "en": "the state directory {path} cannot be created ({reason})",
        "zh": "无法创建状态目录 {path}（{reason}）",
    },
    "state.cannot_list": {
        "en": "the run records in {path} cannot be listed ({reason})",
        "zh": "无法列出 {path} 中的运行记录（{reason}）",
    },
    "state.nothing_changed": {"en": "{error}; nothing was changed", "zh": "{error}；没有做任何修改"},
    "state.effect_unrecorded": {
        "en": "the approved action WAS carried out ({actions}), but the run could not be recorded: {error}. "
        "The change stands: check it in the orders themselves, and make room for the state directory "
        "before the next run (its record may still say the action is executing)",
        "zh": "已批准的操作已经执行（{actions}），但无法记录这次运行：{error}。"
        "这个修改已经生效：请直接在订单数据中核对，并在下次运行前为状态目录腾出空间（记录中可能仍显示该操作正在执行）",
    },
    "state.effect_unrecorded_shared": {
        "en": "the approved action WAS carried out ({actions}), but the run could not be recorded: {error}. "
        "The change stands: check it in the orders themselves; the run store still says the action is executing, "
        "so it will never be carried out again",
        "zh": "已批准的操作已经执行（{actions}），但无法记录这次运行：{error}。"
        "这个修改已经生效：请直接在订单数据中核对；运行存储中仍显示该操作正在执行，所以它不会再被执行",
    },
    "state.not_a_regular_file": {"en": "not a regular file", "zh": "不是普通文件"},
    "state.log_is_a_link": {
        "en": "it is a symbolic link, which orderbot does not follow",
        "zh": "它是符号链接，orderbot 不会跟随",
    },
    # ---- taking over an earlier orderbot's JSON records (orderbot.runs.takeover) ---------------
    "takeover.done": {
        "en": "orderbot now keeps runs in {db}: {runs} runs and {entries} audit entries of the JSON files an "
        "earlier orderbot kept came over; the files themselves are in {aside}",
        "zh": "orderbot 现在把运行记录保存在 {db} 中：早先版本保存的 JSON 文件里的 {runs} 个运行和 {entries} "
        "条审计记录已迁入；原文件保存在 {aside}",
    },
    "takeover.left": {
        "en": "{what} was not taken over ({why}); it stays in {aside}",
        "zh": "{what} 没有迁入（{why}）；它留在 {aside}",
    },
    "takeover.not_a_folder": {"en": "not a folder", "zh": "不是目录"},
    "takeover.too_large": {"en": "far too large for a run record", "zh": "远超运行记录的大小"},
    "takeover.unreadable": {"en": "cannot be read: {why}", "zh": "无法读取：{why}"},
    "takeover.log_exists": {
        "en": "the database already holds an audit log of its own, and two chains do not mix",
        "zh": "数据库中已有自己的审计日志，两条链不能混合",
    },
    "takeover.not_an_entry": {"en": "not an audit entry", "zh": "不是审计记录"},
    "takeover.entry_repeated": {
        "en": "an earlier line already holds entry {seq}",
        "zh": "前面的行已经是第 {seq} 条记录",
    },
    "takeover.cannot_move": {
        "en": "the JSON files of an earlier orderbot in {path} came over, but cannot be moved aside ({reason})",
        "zh": "{path} 中早先版本的 JSON 文件已迁入，但无法移到一旁（{reason}）",
    },
    "doctor.taken_over": {
        "en": "taken over from JSON files at {at}: {runs} runs, {entries} audit entries, {left} left out ({aside})",
        "zh": "于 {at} 从 JSON 文件迁入：{runs} 个运行、{entries} 条审计记录，{left} 项未迁入（{aside}）",
    },
    # ---- under the answer: the facts panel and the claim check (orderbot.answers.facts, orderbot.answers.claims) --
    "facts.title": {"en": "Facts from the tools:", "zh": "工具返回的事实："},
    "facts.not_found": {"en": "not found", "zh": "不存在"},
    "facts.no_access": {"en": "no access", "zh": "无权查看"},
    "facts.sign_in_required": {"en": "sign-in required", "zh": "需要登录"},
    "facts.not_cancellable": {"en": "not cancellable: {status}", "zh": "不能取消：{status}"},
    "facts.rejected": {"en": "rejected: nothing was done", "zh": "被拒绝：未做任何操作"},
    "facts.read_only": {"en": "not done: read-only sample", "zh": "未完成：只读示例数据"},
    "facts.busy": {"en": "not done: orders file busy", "zh": "未完成：订单文件被占用"},
    "facts.write_failed": {"en": "not done: write failed", "zh": "未完成：保存失败"},
    "facts.store_unavailable": {"en": "not done: orders unreadable", "zh": "未完成：订单数据无法读取"},
    "facts.unreadable": {"en": "orders unreadable", "zh": "订单数据无法读取"},
    "facts.internal_error": {"en": "tool failed", "zh": "工具出错"},
    "facts.failed": {"en": "failed: {code}", "zh": "失败：{code}"},
    "facts.pending": {"en": "awaiting approval", "zh": "等待确认"},
    "facts.cancelled": {"en": "cancelled in this run", "zh": "已在本次运行中取消"},
    "facts.done": {"en": "done in this run", "zh": "已在本次运行中完成"},
    # What became of an action, named as the action: "exchange rejected: nothing was done".
    "facts.acted": {"en": "{action} {outcome}", "zh": "{action}{outcome}"},
    "facts.customer": {"en": "customer", "zh": "客户"},
    "facts.action.cancel": {"en": "cancel", "zh": "取消"},
    "facts.action.modify_items": {"en": "item change", "zh": "修改商品"},
    "facts.action.modify_address": {"en": "order address change", "zh": "修改订单地址"},
    "facts.action.modify_payment": {"en": "payment change", "zh": "修改支付方式"},
    "facts.action.return": {"en": "return", "zh": "退货"},
    "facts.action.exchange": {"en": "exchange", "zh": "换货"},
    "facts.action.user_address": {"en": "customer address change", "zh": "修改客户地址"},
    "facts.action.transfer": {"en": "transfer to a human agent", "zh": "转人工客服"},
    "facts.items": {"en": "items", "zh": "商品"},
    "facts.total": {"en": "total", "zh": "合计"},
    "facts.shipping": {"en": "shipping", "zh": "物流"},
    "facts.created": {"en": "created", "zh": "下单"},
    "facts.note": {"en": "note", "zh": "备注"},
    "claims.unknown_id": {
        "en": "⚠ Unsupported: the answer names {order_id}, but no tool returned it",
        "zh": "⚠ 无依据：回答提到了 {order_id}，但没有任何工具返回过它",
    },
    "claims.nonexistent_id": {
        "en": "⚠ Unsupported: the answer speaks of {order_id}, but the tools said it does not exist ({observed})",
        "zh": "⚠ 无依据：回答提到了 {order_id}，但工具说它不存在（{observed}）",
    },
    "claims.status": {
        "en": "⚠ Unsupported: the answer gives {order_id} the status {said}, but the tools returned {observed}",
        "zh": "⚠ 无依据：回答说 {order_id} 的状态是 {said}，但工具返回的是 {observed}",
    },
    "claims.cancellation": {
        "en": "⚠ Unsupported: the answer says {order_id} was cancelled ({said}), but no cancellation ran ({observed})",
        "zh": "⚠ 无依据：回答说 {order_id} 已取消（{said}），但并没有执行取消（{observed}）",
    },
    "claims.amount": {
        "en": "⚠ Unsupported: the answer gives {order_id} the amount {said}, but the tools returned {observed}",
        "zh": "⚠ 无依据：回答说 {order_id} 的金额是 {said}，但工具返回的是 {observed}",
    },
    "claims.items": {
        "en": "⚠ Unsupported: the answer says {order_id} holds {said}, but the tools returned {observed}",
        "zh": "⚠ 无依据：回答说 {order_id} 包含 {said}，但工具返回的是 {observed}",
    },
    "claims.date": {
        "en": "⚠ Unsupported: the answer gives {order_id} the date {said}, but the tools returned {observed}",
        "zh": "⚠ 无依据：回答说 {order_id} 的日期是 {said}，但工具返回的是 {observed}",
    },
    "claims.nothing": {"en": "nothing about it", "zh": "没有相关结果"},
    # ---- orderbot eval ----------------------------------------------------------------------------
    "eval.unknown_limit": {
        "en": "{path}: cases.{index}.limits: '{name}' is not a limit; use {known}",
        "zh": "{path}：cases.{index}.limits：'{name}' 不是一个限制；可用的有 {known}",
    },
    "eval.suite_unreadable": {
        "en": "{path}: the suite cannot be read ({reason})",
        "zh": "{path}：无法读取测试集（{reason}）",
    },
    "eval.suite_invalid": {"en": "{path}: {where}: {why}", "zh": "{path}：{where}：{why}"},
    "eval.the_suite": {"en": "the suite", "zh": "测试集"},
    "eval.name_twice": {
        "en": "{path}: the case name {name} is used twice",
        "zh": "{path}：用例名 {name} 用了两次",
    },
    "eval.bad_limit": {
        "en": "{path}: cases.{index}.limits.{where}: {why}",
        "zh": "{path}：cases.{index}.limits.{where}：{why}",
    },
    "eval.cannot_copy": {
        "en": "{source}: orderbot eval runs each case on a copy of the orders, and a database server cannot be "
        "copied; export the orders to a JSON file or a SQLite database and pass that",
        "zh": "{source}：orderbot eval 在订单的副本上运行每个用例，而数据库服务器无法复制；"
        "请把订单导出为 JSON 文件或 SQLite 数据库后再传入",
    },
    "eval.orders_unreadable": {
        "en": "{path}: the orders source cannot be read ({reason})",
        "zh": "{path}：无法读取订单数据（{reason}）",
    },
    "eval.orders_outside": {
        "en": "{path}: its orders '{orders}' are not a file in the suite's folder; a suite may only name orders "
        "beside it (pass --orders to use others)",
        "zh": "{path}：它的 orders '{orders}' 不是测试集所在目录中的文件；"
        "测试集只能使用放在它旁边的订单（要用别的订单请传 --orders）",
    },
    "eval.header": {
        "en": "orderbot eval · {suite} · {model} · orders: {orders}",
        "zh": "orderbot eval · {suite} · {model} · 订单：{orders}",
    },
    "eval.case": {"en": "case", "zh": "用例"},
    "eval.result": {"en": "result", "zh": "结果"},
    "eval.stop": {"en": "stop", "zh": "停止原因"},
    "eval.calls": {"en": "calls", "zh": "调用"},
    "eval.seconds": {"en": "s", "zh": "秒"},
    "eval.tokens": {"en": "tokens", "zh": "令牌"},
    "eval.why": {"en": "why it failed", "zh": "失败原因"},
    "eval.pass": {"en": "pass", "zh": "通过"},
    "eval.fail": {"en": "FAIL", "zh": "失败"},
    # why a case failed: the check's name, then its reasons (the English texts are also --json's `detail`)
    "eval.why_check": {"en": "{check}: {detail}", "zh": "{check}：{detail}"},
    "eval.check.tools": {"en": "tools", "zh": "工具调用"},
    "eval.check.refused": {"en": "refused", "zh": "拒绝"},
    "eval.check.stop": {"en": "stop", "zh": "停止原因"},
    "eval.check.claims": {"en": "claims", "zh": "无依据的说法"},
    "eval.check.facts": {"en": "facts", "zh": "事实"},
    "eval.reason_separator": {"en": "; ", "zh": "；"},
    "eval.list_separator": {"en": ", ", "zh": "、"},
    "eval.reason.missing_call": {"en": "missing {call}", "zh": "缺少调用 {call}"},
    "eval.reason.unexpected_call": {"en": "unexpected {call}", "zh": "多出的调用 {call}"},
    "eval.reason.not_refused": {"en": "no call was refused with {codes}", "zh": "没有调用因 {codes} 被拒绝"},
    "eval.reason.stop": {"en": "{stop}, not {expected}", "zh": "{stop}，而不是 {expected}"},
    "eval.reason.lacks": {"en": "answer lacks {facts}", "zh": "回答缺少 {facts}"},
    "eval.reason.claim.unknown_id": {
        "en": "{order_id}: unknown_id ({said})",
        "zh": "{order_id}：没有工具返回过这个订单（{said}）",
    },
    "eval.reason.claim.nonexistent_id": {
        "en": "{order_id}: nonexistent_id ({said})",
        "zh": "{order_id}：工具说这个订单不存在（{said}）",
    },
    "eval.reason.claim.status": {
        "en": "{order_id}: status ({said})",
        "zh": "{order_id}：状态与工具返回的不符（{said}）",
    },
    "eval.reason.claim.cancellation": {
        "en": "{order_id}: cancellation ({said})",
        "zh": "{order_id}：说已取消，但没有执行取消（{said}）",
    },
    "eval.reason.claim.amount": {
        "en": "{order_id}: amount ({said})",
        "zh": "{order_id}：金额与工具返回的不符（{said}）",
    },
    "eval.reason.claim.items": {
        "en": "{order_id}: items ({said})",
        "zh": "{order_id}：商品与工具返回的不符（{said}）",
    },
    "eval.reason.claim.date": {
        "en": "{order_id}: date ({said})",
        "zh": "{order_id}：日期与工具返回的不符（{said}）",
    },
    "eval.reason.claim": {"en": "{order_id}: {kind} ({said})", "zh": "{order_id}：{kind}（{said}）"},
    "eval.case_limits": {"en": "case {name}: invalid limits ({error})", "zh": "用例 {name}：限制无效（{error}）"},
    "eval.totals": {
        "en": "{passed}/{cases} passed ({rate}%, needed {needed}%) · time median {median_s} s, worst {worst_s} s · "
        "tokens median {median_tokens}, worst {worst_tokens}",
        "zh": "{passed}/{cases} 通过（{rate}%，要求 {needed}%）· 用时中位数 {median_s} 秒，最慢 {worst_s} 秒 · "
        "令牌中位数 {median_tokens}，最多 {worst_tokens}",
    },
    "eval.orders_changed": {
        "en": " · THE ORDERS SOURCE CHANGED DURING THE EVAL",
        "zh": " · 评测期间订单数据被改动了",
    },
    # ---- the retail shop's approvals: what a write will do (orderbot/shops/retail/describe.py) -----
    "retail.gift_card": {"en": "gift card {id} (balance {balance})", "zh": "礼品卡 {id}（余额 {balance}）"},
    "retail.credit_card": {
        "en": "{brand} card ending {last_four} ({id})",
        "zh": "尾号 {last_four} 的 {brand} 卡（{id}）",
    },
    "retail.paypal": {"en": "PayPal ({id})", "zh": "PayPal（{id}）"},
    "retail.refund_to": {"en": "{amount} back to {method}", "zh": "{amount} 退回 {method}"},
    "retail.cancel": {
        "en": "Cancel order {order} (paid {total}), reason: {reason}; refund {refunds}",
        "zh": "取消订单 {order}（已付 {total}），原因：{reason}；退款 {refunds}",
    },
    "retail.order_address": {
        "en": "Change the shipping address of order {order}: {old} → {new}",
        "zh": "修改订单 {order} 的收货地址：{old} → {new}",
    },
    "retail.user_address": {
        "en": "Change the default address of customer {customer}: {old} → {new}",
        "zh": "修改客户 {customer} 的默认地址：{old} → {new}",
    },
    "retail.swap": {
        "en": "{name} {old} ({old_options}, {old_price}) → {new} ({new_options}, {new_price})",
        "zh": "{name} {old}（{old_options}，{old_price}）→ {new}（{new_options}，{new_price}）",
    },
    "retail.item": {"en": "{name} {id} ({options}, {price})", "zh": "{name} {id}（{options}，{price}）"},
    "retail.pay_difference": {
        "en": "the price difference {amount} is paid with {method}",
        "zh": "差价 {amount} 由 {method} 支付",
    },
    "retail.refund_difference": {
        "en": "the price difference {amount} goes back to {method}",
        "zh": "差价 {amount} 退回 {method}",
    },
    "retail.no_difference": {"en": "no price difference", "zh": "没有差价"},
    "retail.modify_items": {
        "en": "Change items of pending order {order}: {swaps}; {difference}; after this the order can be "
        "neither modified nor cancelled",
        "zh": "修改待处理订单 {order} 的商品：{swaps}；{difference}；此后这个订单不能再修改或取消",
    },
    "retail.exchange": {
        "en": "Exchange items of delivered order {order}: {swaps}; {difference}",
        "zh": "换货（已送达订单 {order}）：{swaps}；{difference}",
    },
    "retail.payment": {
        "en": "Pay order {order} ({amount}) with {new} instead of {old}; {old} gets {amount} back",
        "zh": "订单 {order}（{amount}）改用 {new} 支付，不再用 {old}；{amount} 退回 {old}",
    },
    "retail.return": {
        "en": "Return from delivered order {order}: {items}; the refund of {amount} goes to {method}",
        "zh": "退货（已送达订单 {order}）：{items}；退款 {amount} 退到 {method}",
    },
    # ---- orderbot mcp: what the MCP client and the person starting the server are told --------
    "mcp.question": {"en": "MCP session (client: {client})", "zh": "MCP 会话（客户端：{client}）"},
    "mcp.session_closed": {"en": "the MCP session has ended", "zh": "MCP 会话已结束"},
    "mcp.arguments_too_large": {
        "en": "the arguments are {size:,} characters, over the cap of {cap:,}; nothing was done",
        "zh": "参数有 {size:,} 个字符，超过了上限 {cap:,}；什么都没做",
    },
    "mcp.no_such_approval": {
        "en": "no approval with this state is waiting in this session; nothing was done",
        "zh": "本会话中没有与此状态对应的待批准操作；什么都没做",
    },
    "mcp.not_the_same_call": {
        "en": "the answer is for a different call than the one the person was asked about; nothing was done",
        "zh": "这个回答针对的调用与询问用户的调用不同；什么都没做",
    },
    "mcp.not_this_customers_run": {
        "en": "no run of this session's customer waits or waited for approval under that run id",
        "zh": "本会话的客户没有以这个运行 ID 等待或等待过批准的运行",
    },
    "mcp.question_next": {
        "en": "MCP session (client: {client}), continued from run {run_id}",
        "zh": "MCP 会话（客户端：{client}），接续运行 {run_id}",
    },
    "mcp.too_many_in_flight": {
        "en": "{count} calls of this session already wait for an answer; send this one again once some are answered",
        "zh": "本会话已有 {count} 个调用在等待回答；请在其中一些得到回答后再发送这个调用",
    },
    "mcp.rate_limited": {
        "en": "this session may make {calls} calls in any {seconds:g} seconds; try again in {retry:g} seconds",
        "zh": "本会话在任意 {seconds:g} 秒内最多调用 {calls} 次；请在 {retry:g} 秒后再试",
    },
    "mcp.withdrawn": {
        "en": "the MCP client withdrew the call before the person answered",
        "zh": "MCP 客户端在用户回答之前撤回了这个调用",
    },
    "mcp.client_gone": {
        "en": "the MCP client went away before the person answered",
        "zh": "MCP 客户端在用户回答之前已断开",
    },
    "mcp.internal_error": {
        "en": "the session failed unexpectedly; the error was logged",
        "zh": "会话意外失败；错误已记入日志",
    },
    "mcp.not_executed": {"en": "this call was not executed", "zh": "这个调用没有执行"},
    "mcp.queued": {
        "en": "waiting for approval in run {run_id}: a person approves it with `orderbot approvals approve "
        "{run_id}`; check_approval tells what became of it",
        "zh": "正在运行 {run_id} 中等待批准：由人用 `orderbot approvals approve {run_id}` 批准；"
        "check_approval 可查询结果",
    },
    "mcp.approve_prompt": {
        "en": "orderbot asks you to approve this action: {action}",
        "zh": "orderbot 请你批准这个操作：{action}",
    },
    "mcp.check_approval": {
        "en": "What became of an action of this customer left waiting for approval, by this session or an "
        "earlier one: give the run id its call returned; without one, the actions that wait now. Read-only.",
        "zh": "查询本客户（本会话或更早的会话）等待批准的操作的结果：给出调用返回的运行 ID；"
        "不给则列出现在等待的操作。只读。",
    },
    "mcp.run_id": {
        "en": "The run id the waiting call returned; leave it out to list the actions that wait now.",
        "zh": "等待中的调用返回的运行 ID；不给则列出现在等待的操作。",
    },
    "error.mcp_missing": {
        "en": "orderbot mcp needs the mcp package, which is not installed: {command}",
        "zh": "orderbot mcp 需要 mcp 包，但它没有安装：{command}",
    },
    "error.mcp_address": {
        "en": "--http {address}: give HOST:PORT, e.g. 127.0.0.1:8765",
        "zh": "--http {address}：请写成 HOST:PORT，例如 127.0.0.1:8765",
    },
    "error.mcp_remote": {
        "en": "--http {host} is not a loopback address: add --allow-remote, and set ORDERBOT_MCP_TOKEN "
        "to the bearer token clients must send",
        "zh": "--http {host} 不是回环地址：请加 --allow-remote，并把客户端必须发送的 Bearer 令牌设到 "
        "ORDERBOT_MCP_TOKEN",
    },
    "error.mcp_window": {
        "en": "--window {seconds:g}: give the seconds of the call window, more than 0 and at most {most:g}",
        "zh": "--window {seconds:g}：请给出调用窗口的秒数，大于 0 且不超过 {most:g}",
    },
    "error.mcp_idle": {
        "en": "--idle {seconds:g}: give the seconds a session may go unused, more than 0 and at most {most:g}",
        "zh": "--idle {seconds:g}：请给出会话可闲置的秒数，大于 0 且不超过 {most:g}",
    },
    "error.mcp_jwks": {
        "en": "--jwks {source}: the identity provider's keys could not be read: {why}",
        "zh": "--jwks {source}：无法读取身份提供方的密钥：{why}",
    },
    "error.mcp_jwks_needs": {
        "en": "--jwks, --issuer and --audience go together, with --http: give all three",
        "zh": "--jwks、--issuer 和 --audience 需要一起使用，并配合 --http：请三者都给出",
    },
    "error.mcp_issuer": {
        "en": "--issuer {issuer}: give the identity provider's issuer URL (https://…), as its tokens name it",
        "zh": "--issuer {issuer}：请给出身份提供方的签发者 URL（https://…），与其令牌中的一致",
    },
    "error.mcp_token": {
        "en": "--allow-remote needs clients to send a bearer token: make one (orderbot mcp tokens add), give "
        "--jwks, or set ORDERBOT_MCP_TOKEN (at least 16 characters)",
        "zh": "--allow-remote 要求客户端发送 Bearer 令牌：请创建令牌（orderbot mcp tokens add）、给出 --jwks，"
        "或设置 ORDERBOT_MCP_TOKEN（至少 16 个字符）",
    },
    # ---- orderbot mcp tokens: the bearer tokens clients of --http send -------------------------
    "tokens.for_another": {
        "en": "{operator} may make a token only in its own name, not for the operator {named}",
        "zh": "{operator} 只能以自己的名义创建令牌，不能为操作员 {named} 创建",
    },
    "tokens.not_yours_to_revoke": {
        "en": "{operator} may revoke only a token it made or one in its own name, not {id}",
        "zh": "{operator} 只能撤销自己创建的或以自己名义的令牌，不能撤销 {id}",
    },
    "tokens.no_such": {"en": "no token {id} in {where}", "zh": "{where} 中没有令牌 {id}"},
    "tokens.bad_expiry": {
        "en": "--expires {value}: give a time from now (90m, 12h, 30d, 2w) or a UTC date or time "
        "(2027-01-31, 2027-01-31T18:00:00Z)",
        "zh": "--expires {value}：请给出从现在起的时长（90m、12h、30d、2w）或 UTC 日期或时间"
        "（2027-01-31、2027-01-31T18:00:00Z）",
    },
    "tokens.expiry_past": {"en": "--expires {value} is not in the future", "zh": "--expires {value} 不在将来"},
    "tokens.one_of": {
        "en": "give --customer ID or --operator NAME: a token names one customer or one operator",
        "zh": "请给出 --customer ID 或 --operator NAME：一个令牌只代表一个客户或一个操作员",
    },
    "tokens.added": {
        "en": "Token {id} for {names}{until}, kept in {where} as its hash only: this is the one time it is "
        "shown. Clients send it as Authorization: Bearer TOKEN; orderbot mcp tokens revoke {id} ends it.",
        "zh": "令牌 {id}（代表{names}{until}）已保存在 {where}，只保存其哈希：这是唯一一次显示它。"
        "客户端以 Authorization: Bearer TOKEN 发送；orderbot mcp tokens revoke {id} 可使其失效。",
    },
    "tokens.until": {"en": ", until {at} UTC", "zh": "，有效至 {at} UTC"},
    "tokens.customer": {"en": "customer {customer}", "zh": "客户 {customer}"},
    "tokens.operator": {"en": "operator {operator}", "zh": "操作员 {operator}"},
    "tokens.state_active": {"en": "active", "zh": "有效"},
    "tokens.state_revoked": {"en": "revoked", "zh": "已撤销"},
    "tokens.state_expired": {"en": "expired", "zh": "已过期"},
    "tokens.none": {
        "en": "No tokens in {where}: orderbot mcp --http serves loopback clients without one "
        "(orderbot mcp tokens add --customer ID makes one).",
        "zh": "{where} 中没有令牌：orderbot mcp --http 为回环地址上的客户端提供服务无需令牌"
        "（orderbot mcp tokens add --customer ID 可创建一个）。",
    },
    "tokens.revoked": {
        "en": "Token {id} is revoked: a request with it is refused from now on (401 invalid_token).",
        "zh": "令牌 {id} 已撤销：从现在起带它的请求会被拒绝（401 invalid_token）。",
    },
    "tokens.already_revoked": {
        "en": "Token {id} was already revoked, by {by} at {at} UTC.",
        "zh": "令牌 {id} 早已被 {by} 于 {at} UTC 撤销。",
    },
    "mcp.listening": {
        "en": "orderbot mcp: serving {shop} tools on {url} (Ctrl-C stops)",
        "zh": "orderbot mcp：在 {url} 上提供 {shop} 工具（Ctrl-C 停止）",
    },
}
