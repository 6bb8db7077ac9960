"""FOR TESTS ONLY: the e2e's sampler, vistool's (`failed_groups.VistoolReplayBuffer`, the same
settings) with the record of what the trainer trains (`trained_batches`) installed.

veRL loads a custom sampler in its trainer process once its trainer module is imported
(`trainer.v1.sampler.custom_sampler.path=pkg://vistool_verl.cpu_stand_in.recording_sampler`), which
is the moment the padding call can be wrapped: the stand-in's own plugin is imported while veRL
itself is still importing, too early to load the trainer.
"""
from __future__ import annotations

from ..failed_groups import VistoolReplayBuffer
from . import trained_batches

trained_batches.install()


class RecordingReplayBuffer(VistoolReplayBuffer):
    """VistoolReplayBuffer; importing this module installs the trained-batch record."""
