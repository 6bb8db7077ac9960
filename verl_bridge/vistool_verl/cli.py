"""`vistool-verl COMMAND` (or `python -m vistool_verl`): smoke (the agent loop on CPU into a run directory), e2e (veRL's own
trainer on CPU with the rollout stand-in, into a run directory), data (tasks ↔ veRL parquet)."""
import sys


def main() -> int:
    command, rest = (sys.argv[1], sys.argv[2:]) if len(sys.argv) > 1 else ("", [])
    if command == "smoke":
        from .smoke import main as smoke
        return smoke(rest)
    if command == "e2e":
        from .e2e import main as e2e
        return e2e(rest)
    if command == "tools":
        from .vistool_tool import main as tools
        return tools(rest)
    if command == "data":
        from .parquet_rows import main as data
        return data(rest)
    print("usage: python -m vistool_verl smoke [--out DIR] | e2e [--out DIR] | tools config --out FILE | data convert --to verl|--from verl ...", file=sys.stderr)
    return 2



