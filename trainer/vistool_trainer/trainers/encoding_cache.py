"""SFT's encoded gold conversations, kept up to a byte budget, least recently drawn first out.

Encoding a gold conversation (tokens, preprocessed pixels) is a pure function of it, so a
conversation evicted here and drawn again is encoded to the same tensors: the budget changes the
memory and the time of a run, never its numbers. Unbounded, the bars demo held every one of its
8,000 conversations' pixels (fp32 patches, ~0.6 MB per 224x112 image) and its trainer peaked at
8-10.5 GB, which a 2-core laptop with 8 GB cannot give and which let three demos on one 24 GB
machine be killed for memory."""
from __future__ import annotations

from collections import OrderedDict
from typing import Hashable

from ..model.conversation_encoding import EncodedConversation

# Room for the images of about 1,600 bars-demo conversations: the calls and reading phases draw
# from all 4,000 tasks, so most draws are re-encoded either way; this keeps the recent ones.
SFT_ENCODING_CACHE_BYTES = 1 << 30


def pixel_bytes(segments: list[EncodedConversation]) -> int:
    return sum(segment.pixel_values.numel() * segment.pixel_values.element_size()
               for segment in segments if segment.pixel_values is not None)


class EncodingCache:
    def __init__(self, max_bytes: int = SFT_ENCODING_CACHE_BYTES):
        self.max_bytes = max_bytes
        self._items: OrderedDict[Hashable, list[EncodedConversation]] = OrderedDict()
        self._bytes = 0

    def get(self, key: Hashable) -> list[EncodedConversation] | None:
        segments = self._items.get(key)
        if segments is not None:
            self._items.move_to_end(key)
        return segments

    def peek(self, key: Hashable) -> list[EncodedConversation] | None:
        """As `get`, without counting as a use."""
        return self._items.get(key)

    def put(self, key: Hashable, segments: list[EncodedConversation]) -> None:
        if key in self._items:
            self._bytes -= pixel_bytes(self._items.pop(key))
        self._items[key] = segments
        self._bytes += pixel_bytes(segments)
        # The newest entry stays even alone over budget: the step about to use it needs it.
        while self._bytes > self.max_bytes and len(self._items) > 1:
            _, evicted = self._items.popitem(last=False)
            self._bytes -= pixel_bytes(evicted)

    @property
    def bytes(self) -> int:
        return self._bytes

    def __len__(self) -> int:
        return len(self._items)
