"""vistool trainer: the Python side that owns gradients.

Loads a Qwen2.5-VL policy (a hub id, a local path, or the embedded micro model), rolls out
episodes through the vistool env server, and trains with SFT and GRPO/DAPO. It never parses or
executes tool calls itself: the env server does that, and this package only sends model text.
"""

__version__ = "0.1.0"
