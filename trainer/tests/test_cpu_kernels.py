"""`demo --cpu-kernels` (run/cpu_kernels.py): the ATen kernel path reaches each arm's trainer, the
trainer records the path it really ran, a path this CPU cannot run is refused before any work, and
a resumed demo keeps the path it started with. The expected paths come from torch itself, asked in
a fresh interpreter (torch settles its path once per process)."""
import io
import json
import os
import subprocess
import sys

import pytest

from vistool_trainer.config import to_dict
from vistool_trainer.run.cpu_kernels import (CPU_KERNELS, PROBE, arm_environment, check_cpu_kernels, kernels_possible,
                                             kernels_refusal)
from vistool_trainer.run.demo import ARMS, _start_arm, demo_config, run_demo
from vistool_trainer.run.run_config import ConfigError


def _torch_capability(variable=None):
    """What torch reports in a fresh interpreter started with ATEN_CPU_CAPABILITY=`variable` (None: unset)."""
    environment = {key: value for key, value in os.environ.items() if key != "ATEN_CPU_CAPABILITY"}
    if variable is not None:
        environment["ATEN_CPU_CAPABILITY"] = variable
    probe = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=environment, timeout=300, check=True)
    return probe.stdout.strip().splitlines()[-1]


@pytest.fixture(scope="module")
def native():
    return _torch_capability()


def test_the_arm_environment_carries_the_threads_and_the_kernel_path_and_drops_an_inherited_one():
    base = {"PATH": "/usr/bin", "ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2", "OMP_NUM_THREADS": "8"}
    # ATen's path, and oneDNN capped at the same instruction set (oneDNN's names; SSE4.1 is its floor on x86).
    assert arm_environment(base, 1, "default") == {"PATH": "/usr/bin", "OMP_NUM_THREADS": "1", "ATEN_CPU_CAPABILITY": "default",
                                                   "ONEDNN_MAX_CPU_ISA": "SSE41"}
    assert arm_environment(base, 1, "avx2")["ONEDNN_MAX_CPU_ISA"] == "AVX2"
    assert arm_environment(base, 1, "avx512")["ONEDNN_MAX_CPU_ISA"] == "AVX512_CORE"
    # No path asked: the CPU's own, whatever the caller's shell held; no threads asked: the caller's count.
    assert arm_environment(base, 0, None) == {"PATH": "/usr/bin", "OMP_NUM_THREADS": "8"}
    assert base["ATEN_CPU_CAPABILITY"] == "avx2"  # the caller's environment is left as it was


# The vision tower's patch embedding is a Conv3d like this one, which torch hands to oneDNN.
PATCH_CONVOLUTION = ("import torch; conv = torch.nn.Conv3d(3, 16, kernel_size=(2, 14, 14), stride=(2, 14, 14), bias=False); "
                     "conv(torch.randn(4, 3, 2, 14, 14)).sum().backward()")


def test_the_oneDNN_cap_reaches_the_convolution_that_oneDNN_runs():
    """oneDNN says which instruction set it dispatched to (ONEDNN_VERBOSE): with `default` asked, SSE4.1,
    its floor, whatever the CPU has; with nothing asked, the CPU's own (not capped)."""
    import torch
    if not torch.backends.mkldnn.is_available():
        pytest.skip("this torch build has no oneDNN, so there is no oneDNN to cap")

    def isa(cpu_kernels):
        environment = {**arm_environment(os.environ, 1, cpu_kernels), "ONEDNN_VERBOSE": "1"}
        run = subprocess.run([sys.executable, "-c", PATCH_CONVOLUTION], capture_output=True, text=True, env=environment, timeout=300, check=True)
        said = [line for line in run.stdout.splitlines() if line.startswith("onednn_verbose") and ",isa:" in line]
        assert said, run.stdout[-2000:]  # oneDNN ran the convolution and said its instruction set
        return said[0].split("isa:")[-1]
    assert isa("default") == "Intel SSE4.1"
    assert isa(None) != "Intel SSE4.1"


def test_torch_names_the_scalar_path_DEFAULT_when_told_default():
    assert _torch_capability("default") == "DEFAULT"


def _arm_that_stops_after_recording(root, arm):
    """An arm config whose training split holds no tasks: the real trainer starts, writes run.json
    (where it records its kernel path) and fails on loading the tasks, before any training."""
    config = to_dict(demo_config(str(root), minutes=1, arm=arm))
    config["threads"] = 1
    (root / "data" / "train").mkdir(parents=True, exist_ok=True)
    (root / "data" / "eval").mkdir(parents=True, exist_ok=True)
    (root / "data" / "train" / "tasks.jsonl").write_text("")
    (root / "data" / "eval" / "tasks.jsonl").write_text(json.dumps({"id": "t0", "answer": "low", "generator": {"kind": "vbar"}}) + "\n")
    (root / f"{arm}.vistool.json").write_text(json.dumps(config))
    return root / f"{arm}.vistool.json"


def _run_arm(root, arm, cpu_kernels):
    (root / "logs").mkdir(parents=True, exist_ok=True)
    process = _start_arm(arm, _arm_that_stops_after_recording(root, arm), root / "logs", 1, cpu_kernels=cpu_kernels)
    process.communicate(timeout=600)
    run = json.loads((root / arm / "run.json").read_text())
    assert run["status"] == "failed" and "holds no tasks" in run["error"], run  # it stopped where the test meant it to
    return run


def test_the_arm_trainer_runs_and_records_the_kernel_path_asked_for(tmp_path, native, monkeypatch):
    asked = _run_arm(tmp_path / "asked", "tools", "default")
    assert asked["cpu_capability"] == _torch_capability("default") == "DEFAULT"
    assert asked["onednn_max_cpu_isa"] == "SSE41" and asked["cpu"]
    # Not asked: the CPU's own path, even when the shell that started the demo set another.
    monkeypatch.setenv("ATEN_CPU_CAPABILITY", "default")
    monkeypatch.setenv("ONEDNN_MAX_CPU_ISA", "SSE41")
    own = _run_arm(tmp_path / "own", "tools", None)
    assert own["cpu_capability"] == native and own["onednn_max_cpu_isa"] is None


def test_the_paths_a_cpu_can_run_are_those_up_to_its_own():
    assert kernels_possible("AVX512") == ("default", "avx2", "avx512")
    assert kernels_possible("AVX2") == ("default", "avx2")
    assert kernels_possible("DEFAULT") == ("default",)
    for elsewhere in ("VSX", "ZVECTOR", "SVE256", "NO AVX"):  # torch reads neither avx2 nor avx512 off x86
        assert kernels_possible(elsewhere) == ("default",)
    assert kernels_refusal("avx2", "AVX512") is None
    said = kernels_refusal("avx512", "AVX2")
    assert said is not None and "own ATen kernel path is AVX2" in said and "--cpu-kernels default or avx2" in said
    assert "illegal instruction" in said


def test_this_cpu_is_refused_exactly_the_paths_beyond_its_own(native):
    for requested in CPU_KERNELS:
        beyond = requested not in kernels_possible(native)
        if beyond:
            with pytest.raises(ConfigError, match=f"own ATen kernel path is {native}"):
                check_cpu_kernels(requested, "cpu")
        else:
            check_cpu_kernels(requested, "cpu")
    check_cpu_kernels(None, "cuda")  # not asked: nothing to check


def test_a_kernel_path_is_refused_on_a_gpu_and_an_unknown_one_anywhere(tmp_path):
    for device in ("cuda", "auto"):
        with pytest.raises(ConfigError, match=f"with --device {device} they (may )?train on a GPU"):
            check_cpu_kernels("default", device)
    with pytest.raises(ConfigError, match="'sse4' is not one of default, avx2, avx512"):
        check_cpu_kernels("sse4", "cpu")
    # Through the demo: said in one line, and nothing written.
    stderr = io.StringIO()
    assert run_demo(str(tmp_path / "demo"), 5, device="cuda", stderr=stderr, cpu_kernels="default") == 2
    assert "give --device cpu" in stderr.getvalue() and not (tmp_path / "demo").exists()


def test_the_cli_offers_the_kernel_paths_the_demo_knows(capsys):
    from vistool_trainer.__main__ import DEMO_CPU_KERNELS, build_parser
    assert DEMO_CPU_KERNELS == CPU_KERNELS
    assert build_parser().parse_args(["demo", "--cpu-kernels", "default"]).cpu_kernels == "default"
    assert build_parser().parse_args(["demo"]).cpu_kernels is None
    with pytest.raises(SystemExit):
        build_parser().parse_args(["demo", "--cpu-kernels", "sse4"])
    assert "invalid choice: 'sse4'" in capsys.readouterr().err
    from pathlib import Path
    makefile = (Path(__file__).resolve().parents[2] / "Makefile").read_text()
    assert "$(if $(DEMO_KERNELS),--cpu-kernels $(DEMO_KERNELS))" in makefile and "DEMO_KERNELS ?=\n" in makefile


def test_a_resumed_demo_keeps_the_kernel_path_it_started_with(tmp_path):
    """A stored demo that asked for `default`: a resume that asks for another is refused; one that asks
    for none starts both arms on `default` (each records DEFAULT), and says how to continue again."""
    root = tmp_path / "demo"
    for arm in ARMS:
        _arm_that_stops_after_recording(root, arm)
    (root / "demo.json").write_text(json.dumps({"task": "bars", "seed": 1, "threads": 1, "model": "micro", "device": "cpu",
                                                "minutes_cap": 1, "cpu_kernels": "default"}))
    stderr = io.StringIO()
    assert run_demo(str(root), 5, stderr=stderr, resume=True, cpu_kernels="avx2") == 2
    assert "cpu_kernels 'avx2' (the demo in this folder has 'default')" in stderr.getvalue()
    assert not (root / "tools").exists()

    stderr = io.StringIO()
    assert run_demo(str(root), 5, stderr=stderr, resume=True) == 1  # both arms fail on their empty split, as meant
    for arm in ARMS:
        assert json.loads((root / arm / "run.json").read_text())["cpu_capability"] == "DEFAULT"
    assert "DEMO_KERNELS=default" in stderr.getvalue()
    summary = json.loads((root / "summary.json").read_text())
    assert summary["cpu_kernels"] == "default" and summary["threads"] == 1
    assert {summary["arms"][arm]["cpu_capability"] for arm in ARMS} == {"DEFAULT"}
    assert "1 trainer thread per arm; ATen kernels DEFAULT (asked with --cpu-kernels default)" in (root / "report.html").read_text()
    assert json.loads((root / "demo.json").read_text())["cpu_kernels"] == "default"
