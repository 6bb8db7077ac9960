"""The processor veRL's token builder renders Qwen2.5-VL conversations with.

transformers' Qwen2_5_VLProcessor refuses to exist without a video processor, and that one needs
torchvision, which does not install beside the CPU torch this project pins. veRL only feeds
images here, so this processor is the real Qwen2.5-VL processor (its chat-template rendering and
image-token expansion) with the video half left out. With torchvision installed (a GPU machine),
`load_processor` returns transformers' own AutoProcessor instead.
"""
from __future__ import annotations

from pathlib import Path

from transformers import AutoProcessor, AutoTokenizer, Qwen2_5_VLProcessor
from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import Qwen2VLImageProcessorPil


class ImageOnlyQwenVLProcessor(Qwen2_5_VLProcessor):
    def __init__(self, image_processor=None, tokenizer=None, chat_template=None, **kwargs):
        super().__init__(image_processor=image_processor, tokenizer=tokenizer, video_processor=None,
                         chat_template=chat_template, **kwargs)

    @classmethod
    def get_attributes(cls) -> list[str]:
        return ["image_processor", "tokenizer"]


def load_processor(model_dir: str | Path) -> Qwen2_5_VLProcessor:
    """The model's processor, with the model's own chat template (vistool's tool template for the
    micro model and for checkpoints the trainer saved)."""
    try:
        import torchvision  # noqa: F401 (only probing)
        return AutoProcessor.from_pretrained(model_dir)
    except ImportError:
        tokenizer = AutoTokenizer.from_pretrained(model_dir)
        image_processor = Qwen2VLImageProcessorPil.from_pretrained(model_dir)
        return ImageOnlyQwenVLProcessor(image_processor, tokenizer, chat_template=tokenizer.chat_template)
