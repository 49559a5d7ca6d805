"""The code line on the engine: values, names kept, devices of what changed, errors."""

from __future__ import annotations

from gpumon.playground.data.actions import RunCode
from gpumon.playground.kernel.engine import Engine
from gpumon.playground.kernel.explain import PYTHON_FALLBACK


def test_assignment_result_and_workspace(engine: Engine) -> None:
    outcome = engine.run(RunCode("x = torch.ones(2, 3)"))
    assert outcome.ok and outcome.kind == "tensor" and outcome.result_name == "x"
    assert outcome.shape == (2, 3) and outcome.device == "cpu"
    assert dict(outcome.details)["made or changed"] == "x (cpu)"
    assert [r.device for r in outcome.memory_before] == ["cpu"]
    assert [r.device for r in outcome.memory_after] == ["cpu"]
    assert [e.name for e in engine.workspace()] == ["x"]


def test_last_expression_is_the_value_and_preimports_are_there(engine: Engine) -> None:
    engine.run(RunCode("x = torch.ones(3)"))
    outcome = engine.run(RunCode("y = x ** 2\ny + x.cpu()"))
    assert outcome.ok and outcome.result_name is None and outcome.preview == "tensor([2., 2., 2.])"
    net = engine.run(RunCode("net = nn.Linear(3, 1)\nF.relu(net(x)).shape"))
    assert net.ok and net.kind == "value" and "torch.Size([1])" in net.preview
    assert engine.names() == ["x", "y", "net"]


def test_in_place_change_and_del_are_seen(engine: Engine) -> None:
    engine.run(RunCode("x = torch.zeros(2)"))
    changed = engine.run(RunCode("x.add_(1)\nNone"))
    assert dict(changed.details)["made or changed"] == "x (cpu)"
    assert engine.run(RunCode("del x")).ok and engine.names() == []


def test_errors_keep_what_ran_before_them(engine: Engine) -> None:
    outcome = engine.run(RunCode("a = torch.ones(2)\nb = a @ torch.ones(3)"))
    assert not outcome.ok and outcome.error is not None
    assert outcome.error.type_name == "RuntimeError" and outcome.error.by_torch
    assert engine.names() == ["a"]


def test_a_typing_mistake_is_python_s_not_torch_s(engine: Engine) -> None:
    outcome = engine.run(RunCode("x = = 1"))
    assert not outcome.ok and outcome.error is not None
    assert outcome.error.type_name == "SyntaxError" and not outcome.error.by_torch
    assert "nothing ran" in outcome.error.explanation


def test_a_name_error_in_typed_code_is_python_s_not_torch_s(engine: Engine) -> None:
    """A NameError raised by the user's own line is Python's: it must not be taught as an
    error 'exactly as torch wrote it'. A shape error in the same line stays torch's."""
    outcome = engine.run(RunCode("z = y * 2"))
    assert not outcome.ok and outcome.error is not None
    assert outcome.error.type_name == "NameError"
    assert outcome.error.explanation == PYTHON_FALLBACK
    assert "torch wrote" not in outcome.error.explanation
    torch_error = engine.run(RunCode("torch.ones(2) @ torch.ones(3)")).error
    assert torch_error is not None and torch_error.explanation != PYTHON_FALLBACK


def test_exit_quit_and_sys_exit_are_cards_and_the_workspace_stays(engine: Engine) -> None:
    """As in Jupyter: exit() in a cell is reported, and the kernel and its names go on."""
    import sys

    stdin = sys.stdin
    for code in ("a = torch.ones(2)\nexit()", "quit()", "import sys\nsys.exit(3)",
                 "raise SystemExit"):
        outcome = engine.run(RunCode(code))
        assert not outcome.ok and outcome.error is not None, code
        assert outcome.error.type_name == "SystemExit" and not outcome.error.by_torch
        assert "workspace is kept" in outcome.error.message
    assert "3" in engine.run(RunCode("import sys\nsys.exit(3)")).error.message  # type: ignore[union-attr]
    assert engine.names()[0] == "a" and engine.get("a") is not None
    assert sys.stdin is stdin and not stdin.closed  # site's exit() would have closed it
    assert engine.run(RunCode("a + 1")).ok


def test_a_loop_that_makes_many_names_gets_a_short_card(engine: Engine) -> None:
    outcome = engine.run(RunCode("for i in range(5000): globals()[f'v{i}'] = i"))
    assert outcome.ok and len(engine.names()) == 5001  # i too
    made = dict(outcome.details)["made or changed"]
    assert len(made) < 1000 and made.endswith("… and 4,981 more names")


def test_the_exit_card_and_the_count_of_names_in_chinese(engine: Engine) -> None:
    from gpumon import i18n

    i18n.set_language("zh_CN")
    card = engine.run(RunCode("import sys\nsys.exit(3)")).error
    assert card is not None
    assert card.message == ("exit() 会结束演练场的内核进程：内核进程继续运行，工作区保留着。"
                            "要求的退出状态：3。")  # no space after '。'
    assert "os._exit() 无法拦截" in card.explanation
    made = engine.run(RunCode("for i in range(30): globals()[f'v{i}'] = i")).details
    assert dict(made)["新建或改动"].endswith("……另有 11 个名称")


def test_a_refusal_in_a_big_workspace_lists_20_names_and_counts_the_rest(engine: Engine) -> None:
    from gpumon.playground.data import actions as act

    engine.run(RunCode("for i in range(5000): globals()[f'v{i}'] = torch.zeros(1)"))
    refused = engine.run(act.Compute("y", "add", "nope", "v0")).error
    assert refused is not None and refused.type_name == "Refused"
    assert refused.message.startswith("There is no value named 'nope'. Names in the workspace: "
                                      "i, v0, v1")  # i: the loop's variable, made first
    assert refused.message.endswith("v18, … and 4,981 more names.") and len(refused.message) < 400
