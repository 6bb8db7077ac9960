"""vistool trainer: the Python side that owns gradients.

Loads a Qwen2.5-VL policy (a hub id, a local path, or the embedded micro model), rolls out
episodes through the vistool env server, and trains with SFT and GRPO/DAPO. It never parses or
executes tool calls itself: the env server does that, and this package only sends model text.
"""

import os

# OpenMP threads that spin while waiting make small tensor ops 10–50x slower whenever the cores are
# shared (the env server, other jobs): measured on the 2-core machine, one RL step went from 68 s
# to 2.7 s with passive waiting. It must be set before torch is imported; an explicit setting wins.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

__version__ = "0.1.0"
