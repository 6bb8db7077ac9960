"""The GPU check's plan (scripts/gpu/budget.py, summary.py): which stages and memory points an 80 GB
H100 runs and which it skips, and the summary a stopped check leaves. Expected values are worked
by hand from the 3B reference's parameter count and the CPU bench's activation figures
(trainer/README.md), not from the functions under test."""
from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

GPU_SCRIPTS = Path(__file__).resolve().parents[2] / "scripts" / "gpu"


def _load(name: str):
    """scripts/gpu/NAME.py under a name of its own (the check imports them as `budget`, `summary`)."""
    spec = importlib.util.spec_from_file_location(f"gpu_check_{name}", GPU_SCRIPTS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


budget = _load("budget")
summary = _load("summary")

PARAMETERS_3B = 3_754_622_976  # reference_sizes.size_parameter_counts(QWEN2_5_VL_3B)["total"]
H100_TOTAL = 85_520_809_984  # torch's total_memory of an 80 GB H100 (79.65 GiB)
H200_TOTAL = 150_754_820_096  # of a 141 GB H200 (140.4 GiB)


def test_training_state_is_14_bytes_held_and_18_at_the_step():
    # 2 (bf16) + 4 (fp32 master) + 8 (two fp32 moments); + 4 (fp32 gradient)
    assert budget.HELD_B_PER_PARAM == 14
    assert budget.STEP_B_PER_PARAM == 18


def test_checkpointed_8k_point_estimate_by_hand():
    # 18 B x 3,754,622,976 = 67,583,213,568 B; activations 0.274 x 8192 + 600 + 0.124 x 8192 = 3,860.416 MiB
    expected = 67_583_213_568 + 3860.416 * 2**20
    assert budget.full_finetune_step_bytes(PARAMETERS_3B, "qwen2.5-vl-3b", 8192, True) == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize(("tokens", "checkpointing", "on_h100", "on_h200"), [
    (1024, True, True, True),     # 62.94 + 0.98 = 63.9 GiB
    (8192, True, True, True),     # 62.94 + 3.77 = 66.7 GiB
    (1024, False, True, True),    # 62.94 + 6.49 + 0.62 = 70.1 GiB < 76.6
    (4096, False, False, True),   # 62.94 + 25.96 + 0.62 = 89.5 GiB
    (8192, False, False, True),   # 62.94 + 51.92 + 0.62 = 115.5 GiB < 137.4
])
def test_which_memory_points_an_h100_and_an_h200_run(tokens, checkpointing, on_h100, on_h200):
    estimate = budget.full_finetune_step_bytes(PARAMETERS_3B, "qwen2.5-vl-3b", tokens, checkpointing)
    runs_h100, why = budget.fits(estimate, budget.usable_bytes(H100_TOTAL))
    assert runs_h100 is on_h100
    assert budget.fits(estimate, budget.usable_bytes(H200_TOTAL))[0] is on_h200
    if not runs_h100:
        assert "GiB usable" in why


def test_the_precision_stage_fits_an_h100_checkpointed():
    # 18 B/param + checkpointed 1k-token activations, the pre-step weights kept on the host: 63.9 GiB
    estimate = budget.precision_stage_bytes(PARAMETERS_3B, "qwen2.5-vl-3b", 1024)
    assert estimate / 2**30 == pytest.approx(63.93, abs=0.01)
    assert budget.fits(estimate, budget.usable_bytes(H100_TOTAL))[0]


def test_a_size_without_measurements_is_never_skipped_for_memory():
    assert budget.full_finetune_step_bytes(10**6, "tiny", 256, False) is None
    assert budget.fits(None, 1.0) == (True, "")


def test_stage_budgets_needed_before_start_fit_the_wall_budget():
    # Every stage could start if all before it took only what they need: the plan is not longer than the wall.
    needed = sum(stage.needs_s for stage in budget.STAGE_BUDGETS.values())
    assert needed <= budget.WALL_S - budget.FINALIZE_S - 30  # 30 s: start-up (unpacking node, pip, importing torch)
    assert all(stage.needs_s <= stage.cap_s for stage in budget.STAGE_BUDGETS.values())


def test_a_stopped_check_leaves_a_summary_naming_what_did_not_run(tmp_path, monkeypatch):
    records = [
        {"record": "stage", "stage": "environment", "status": "passed", "seconds": 4.0, "summary": "torch", "figures": {"gpu": "H100", "gpu_memory_gib": 79.6}},
        {"record": "memory-point", "stage": "memory", "status": "skipped", "reason": "memory"},
        {"record": "stage", "stage": "memory", "status": "skipped", "reason": "budget: 10 s left", "seconds": 0.0},
        {"record": "stage", "stage": "demo", "status": "failed", "reason": "timeout", "seconds": 99.0},
    ]
    (tmp_path / "results.jsonl").write_text("\n".join(json.dumps(r) for r in records) + '\n{"record": "stage", "sta')  # a torn line
    (tmp_path / "summary.json").write_text(json.dumps({"complete": False, "unfinished": ["demo", "resume"], "dry_run": False}))
    monkeypatch.setattr(sys, "argv", ["summary.py", "--out", str(tmp_path), "--wall-s", "360"])
    assert summary.main() == 0
    written = json.loads((tmp_path / "summary.json").read_text())
    assert written["complete"] is False
    assert written["counts"] == {"passed": 1, "failed": 1, "skipped": 1}
    assert [stage["stage"] for stage in written["stages"]] == ["environment", "memory", "demo"]
    assert written["unfinished"] == ["resume"]
    assert written["gpu"] == "H100"
    assert "INCOMPLETE" in (tmp_path / "summary.txt").read_text()
