"""Token budgets with Qwen2.5's real tokenizer (`python bench/qwen_token_budgets.py`): the first
prompt of each task kind as the trainer encodes it for a Qwen2.5-VL policy — the system turn with
the tool list, the question, the image — on the Qwen-faithful fixture (its tokenizer is Qwen2.5's
to the id: trainer/tests/test_qwen_fixture.py), under the presentation of the 3B recipes
(examples/dapo-qwen2.5-vl-3b-4gpu.vistool.json: tools on, the env server's system prompt).

Each image is counted twice: at Qwen2.5-VL's processor defaults (max_pixels 12,845,056: up to
16,384 tokens an image, what a recipe with `policy.max_pixels: null` gets) and at the 4-GPU
recipe's max_pixels (1,003,520: up to 1,280). Text tokens are every id but the image pads. The
generator's default image sizes are used (no --image-size). Prints one row per kind and a JSON
line; docs/QWEN_FIXTURE.md records a run.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "trainer"))
sys.path.insert(0, str(REPO / "trainer" / "tests"))

KINDS = ("table", "vbar", "hbar", "grouped", "line", "geometry", "search")
RECIPE = REPO / "examples" / "dapo-qwen2.5-vl-3b-4gpu.vistool.json"


def generate(kind: str, n: int, out: Path) -> Path:
    command = ["node", str(REPO / "bin" / "vistool.js"), "data", "gen", "--kind", kind, "--n", str(n), "--seed", "1", "--split", "test",
               "--out", str(out)]
    subprocess.run(command, cwd=REPO, check=True, capture_output=True, text=True, timeout=600)
    return out / "tasks.jsonl"


def first_prompts(policy, config, tasks_path: Path, scratch: Path) -> list:
    from demo_prompts import ScriptedPolicy

    from vistool_trainer.rollouts.env_client import LocalEnvServer
    from vistool_trainer.rollouts.presentation import episode_options
    from vistool_trainer.rollouts.rollout import load_tasks, run_rollouts

    tasks = load_tasks(tasks_path)
    scratch.mkdir(parents=True, exist_ok=True)
    with LocalEnvServer(tasks_path.parent, scratch / "images", scratch / "token", scratch / "server.log") as client:
        recording = ScriptedPolicy(policy, ["<answer>A</answer>"] * len(tasks))
        run_rollouts(recording, client, tasks, 1, replace(episode_options(config), tools=True), 8, 1.0, greedy=True)
    return recording.prompts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=8, help="tasks per kind")
    parser.add_argument("--kinds", default=",".join(KINDS), help=f"comma-separated task kinds to measure (default: all of {', '.join(KINDS)})")
    args = parser.parse_args(argv)
    kinds = [kind.strip() for kind in args.kinds.split(",") if kind.strip()]
    unknown = sorted(set(kinds) - set(KINDS))
    if unknown or not kinds:
        parser.error(f"--kinds: {', '.join(unknown) or '(none)'} not among {', '.join(KINDS)}")

    from model_under_test import qwen_fixture_dir

    from vistool_trainer.model.policy import Policy
    from vistool_trainer.model.policy_processor import PolicyProcessor
    from vistool_trainer.run.run_config import resolve_config

    fixture = qwen_fixture_dir()
    raw = json.loads(RECIPE.read_text())
    raw["policy"]["model"] = str(fixture)
    config = resolve_config(raw)
    recipe_max = int(raw["policy"]["max_pixels"])
    settings = {"default": None, "recipe": recipe_max}
    base = Policy.load(fixture, "cpu", "float32")
    rows = []
    with tempfile.TemporaryDirectory() as scratch_name:
        scratch = Path(scratch_name)
        for kind in kinds:
            tasks_path = generate(kind, args.n, scratch / kind)
            row: dict = {"kind": kind}
            for label, max_pixels in settings.items():
                policy = Policy(base.model, PolicyProcessor.from_pretrained(fixture, min_pixels=3136, max_pixels=max_pixels), base.device)
                prompts = first_prompts(policy, config, tasks_path, scratch / f"{kind}-{label}")
                image_id = policy.processor.image_token_id
                totals = [len(p.input_ids) for p in prompts]
                images = [sum(1 for t in p.input_ids if t == image_id) for p in prompts]
                row[label] = {"total_mean": statistics.fmean(totals), "total_max": max(totals), "image_tokens_mean": statistics.fmean(images),
                              "image_tokens_max": max(images)}
                row["text_tokens_mean"] = statistics.fmean(t - i for t, i in zip(totals, images))
                row["text_tokens_max"] = max(t - i for t, i in zip(totals, images))
            from PIL import Image

            tasks = [json.loads(line) for line in tasks_path.read_text().splitlines() if line.strip()]
            row["image_sizes"] = sorted({"{}x{}".format(*Image.open(tasks_path.parent / task["image"]).size) for task in tasks})
            rows.append(row)
            print(f"{kind:<9} text {row['text_tokens_mean']:.0f} (max {row['text_tokens_max']}), image tokens at the defaults "
                  f"{row['default']['image_tokens_mean']:.0f} (max {row['default']['image_tokens_max']}), at max_pixels {recipe_max:,} "
                  f"{row['recipe']['image_tokens_mean']:.0f} (max {row['recipe']['image_tokens_max']}); first prompt "
                  f"{row['default']['total_mean']:.0f} / {row['recipe']['total_mean']:.0f} tokens; images {', '.join(row['image_sizes'])}", flush=True)
    print(json.dumps({"recipe": RECIPE.name, "recipe_max_pixels": recipe_max, "tasks_per_kind": args.n, "rows": rows}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
