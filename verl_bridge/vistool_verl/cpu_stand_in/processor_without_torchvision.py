"""veRL's processor loader for Qwen2.5-VL on a machine without torchvision.

veRL builds every process's processor with `verl.utils.hf_processor`, which calls AutoProcessor.
transformers' Qwen2.5-VL processor needs a video processor and that needs torchvision, which PyPI
does not serve for this project's CPU torch: AutoProcessor fails, veRL swallows the error and
returns None, and veRL then treats the VL model as text-only (the agent loop refuses images).

This wraps the loader: where it gives None for a Qwen2.5-VL folder, it returns the bridge's
image-only Qwen2.5-VL processor (`vistool_verl.processor`) prepared exactly as veRL prepares its
own: `config` set and the model's `get_rope_index` bound, so veRL computes the 3-D M-RoPE
position ids of image tokens for training as the model computes them in generation (without
it veRL falls back to 1-D positions and the trainer scores another sequence than the rollout
sampled). Where torchvision is installed, veRL's own loader answers and this changes nothing.
"""
from __future__ import annotations

import types
from functools import wraps
from typing import Any, Callable


def image_only_processor(name_or_path: str, **kwargs: Any) -> Any:
    """The bridge's processor for a Qwen2.5-VL folder, with what veRL binds onto its own; None for other models."""
    from transformers import AutoConfig
    from transformers.models.qwen2_5_vl import Qwen2_5_VLModel

    from ..processor import load_processor

    config = AutoConfig.from_pretrained(name_or_path, trust_remote_code=kwargs.get("trust_remote_code", False))
    if getattr(config, "model_type", None) != "qwen2_5_vl":
        return None
    processor = load_processor(name_or_path)
    processor.config = config
    processor.get_rope_index = types.MethodType(Qwen2_5_VLModel.get_rope_index, processor)
    if hasattr(Qwen2_5_VLModel, "get_vision_position_ids"):
        processor.get_vision_position_ids = types.MethodType(Qwen2_5_VLModel.get_vision_position_ids, processor)
    return processor


def with_image_only_fallback(loader: Callable[..., Any]) -> Callable[..., Any]:
    @wraps(loader)
    def load(name_or_path: str, **kwargs: Any) -> Any:
        processor = loader(name_or_path, **kwargs)
        return processor if processor is not None else image_only_processor(name_or_path, **kwargs)
    load.vistool_image_only_fallback = True  # type: ignore[attr-defined]
    return load


def install() -> None:
    """Wraps veRL's loader where its model config imported it (the one call site that builds the
    processors the trainer, the agent-loop workers and the reward workers use)."""
    from ..verl_internals import model_config_module

    model_config = model_config_module()
    if not getattr(model_config.hf_processor, "vistool_image_only_fallback", False):
        model_config.hf_processor = with_image_only_fallback(model_config.hf_processor)
