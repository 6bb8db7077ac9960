"""FOR TESTS ONLY: a record of every row veRL's trainer trains each step, for the e2e checks.

veRL 0.9.1's v1 trainer reads a step's batch from TransferQueue (`ReplayBuffer.sample`), pads it to a
multiple of the mini-batch in `_balance_batch` (`upsample_batch_to_divisible_size`), and hands that
batch to the log-prob passes and the actor update. This wraps the padding call, in the trainer
process, and writes the padded batch to `VISTOOL_RUN_DIR/trained/step-NNNNNN.jsonl`, one line per
row, in the batch's order:

    {"step": N, "key": "<uid>_<session>_<output>", "uid": "...", "session": 0, "padding": false,
     "response_tokens": 57, "trained_ids": [...], "masked_ids": [...]}

`trained_ids` are the response tokens with `response_mask` 1 (what the policy loss reads),
`masked_ids` those with 0 (observations, closing tokens, turns `train_turns` masks). The e2e checks
join the rows to the agent loop's rollout records by uid and session. Written only when
VISTOOL_RUN_DIR is set; a failure to write is logged, never raised (it is a record, not training).
"""
from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

from .. import verl_internals

log = logging.getLogger(__name__)


def _rows(value: Any) -> list[list[int]]:
    """A TransferQueue field as one list per row (nested/jagged tensors, a padded tensor, or a list)."""
    if hasattr(value, "is_nested") and value.is_nested:
        return [row.tolist() for row in value.unbind()]
    if hasattr(value, "tolist"):
        return value.tolist()
    return [row.tolist() if hasattr(row, "tolist") else list(row) for row in value]


def rows_of(keys: list[str], tags: list[dict[str, Any]], responses: list[list[int]], masks: list[list[int]]) -> list[dict[str, Any]]:
    rows = []
    for key, tag, response, mask in zip(keys, tags, responses, masks, strict=True):
        uid, session, _ = key.rsplit("_", 2)
        length = int(tag.get("response_len", len(response)))
        response, mask = response[:length], mask[:length]
        rows.append({"step": tag.get("global_steps"), "key": key, "uid": uid, "session": int(session),
                     "padding": bool(tag.get("is_padding", False)), "response_tokens": length,
                     "trained_ids": [t for t, m in zip(response, mask) if m], "masked_ids": [t for t, m in zip(response, mask) if not m]})
    return rows


def write(batch: Any, run_dir: Path) -> None:
    import transfer_queue as tq

    data = tq.kv_batch_get(keys=list(batch.keys), partition_id=batch.partition_id, select_fields=["responses", "response_mask"])
    rows = rows_of(list(batch.keys), list(batch.tags), _rows(data["responses"]), _rows(data["response_mask"]))
    steps = {row["step"] for row in rows if row["step"] is not None}
    step = max(steps) if steps else 0
    folder = run_dir / "trained"
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / f"step-{int(step):06d}.jsonl").open("a") as out:
        out.write("".join(json.dumps(row) + "\n" for row in rows))


def install() -> None:
    verl_internals.check("e2e_recorder")
    trainer_base = verl_internals.trainer_base_module()
    original = trainer_base.upsample_batch_to_divisible_size
    if getattr(original, "vistool_records", False):
        return

    def recording(batch: Any, batch_multiple: int, eos_token_id: int) -> Any:
        padded = original(batch, batch_multiple, eos_token_id)
        run_dir = os.environ.get("VISTOOL_RUN_DIR")
        if run_dir:
            try:
                write(padded, Path(run_dir))
            except Exception as error:  # a record of the batch is not worth the step
                log.warning("vistool e2e: could not record the trained batch: %s", error)
        return padded

    recording.vistool_records = True  # type: ignore[attr-defined]
    trainer_base.upsample_batch_to_divisible_size = recording
