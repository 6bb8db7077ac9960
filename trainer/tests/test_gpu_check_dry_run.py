"""scripts/gpu/check.py's measuring stages run on the CPU at tiny sizes (its --cpu-dry-run), so the
GPU check does not rot between the rare sessions that have a GPU. The stages that need the carried
node and tasks (demo, resume) are the trainer's own `train` and `--resume`, which other tests run;
`make gpu-check-dry-run` runs all of them through check.sh."""
import json
import subprocess
import sys

from vistool_trainer.checkout import repo_root

STAGES = ["environment", "forward", "generate", "memory", "precision", "lora", "release"]


def test_the_gpu_checks_measuring_stages_run_on_the_cpu(tmp_path):
    done = subprocess.run([sys.executable, "scripts/gpu/check.py", "--cpu-dry-run", "--out", str(tmp_path / "out"), "--node", "node",
                           "--work", str(tmp_path / "work"), "--stages", ",".join(STAGES)],
                          cwd=repo_root(), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    records = [json.loads(line) for line in (tmp_path / "out" / "results.jsonl").read_text().splitlines()]
    by_stage = {r["stage"]: r for r in records if r.get("record") == "stage" and r["stage"] in STAGES}
    assert sorted(by_stage) == sorted(STAGES) and all(r["ok"] and r["status"] == "passed" for r in by_stage.values())
    forward = by_stage["forward"]["figures"]
    assert forward["max_abs_logprob_diff_vs_hf_forward"] < 0.05 < forward["max_abs_logprob_diff_without_images"]
    precision = by_stage["precision"]["figures"]
    assert precision["fp32_masters"]["fp32_masters_moved"] > 0.99 > 0.1 > precision["bf16_adamw"]["bf16_weights_moved"]
    points = [r for r in records if r.get("record") == "memory-point"]
    # 2 budgets x 2 kinds x checkpointing off/on, every one run at the dry run's tiny sizes.
    assert len(points) == 8 and all(p["status"] == "passed" and "step_s" in p for p in points)
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["complete"] is True and summary["counts"]["passed"] == len(STAGES)
    assert (tmp_path / "out" / "summary.txt").read_text().count(" passed ") >= len(STAGES)
