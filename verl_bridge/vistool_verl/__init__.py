"""vistool on veRL: the agent loop (`vistool_agent`), the reward function and the run-directory
records that let vistool's dashboard and rollout viewer follow a veRL run.

The env server does all parsing, tool running and scoring; this package only moves tokens,
text and images between veRL and the server. docs/VERL.md has the whole picture.
"""

__version__ = "0.1.0"
