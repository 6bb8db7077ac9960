"""Answers compared as the scorer compares them (env/rewards/normalize.ts, protocol/answer-text.ts):
NFKC, lower case, punctuation and symbols to spaces, articles dropped unless nothing is left. The
evaluation summary's answer grid and the counterfactual replay's `changed` both read answers so."""
from __future__ import annotations

import re
import unicodedata
from typing import Any

NO_ANSWER = "(no answer)"
# JavaScript's semantics, which the scorer runs: `\b` between ASCII word characters only, and `\s`'s
# whitespace (U+FEFF included, U+001C-U+001F not), where Python's defaults differ on both
# (test/fixtures/answer-normalisation.json holds both languages to the same cases).
_ARTICLES = re.compile(r"\b(?:a|an|the)\b", re.ASCII)
_JS_SPACE_CHARS = "\t\n\v\f\r \u00a0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + "\u2028\u2029\u202f\u205f\u3000\ufeff"
_SPACES = re.compile(f"[{re.escape(_JS_SPACE_CHARS)}]+")


def normalize_answer(text: str) -> str:
    lowered = unicodedata.normalize("NFKC", text).lower()
    spaced = "".join(" " if unicodedata.category(ch)[0] in "PS" else ch for ch in lowered)
    base = _SPACES.sub(" ", spaced).strip(_JS_SPACE_CHARS)
    without = _SPACES.sub(" ", _ARTICLES.sub(" ", base)).strip(_JS_SPACE_CHARS)
    return without or base


def grid_answer(answer: Any) -> str:
    """An answer normalised (a list's items each, joined by ", "); NO_ANSWER for none (protocol/eval-summary.ts' gridAnswer)."""
    if answer is None:
        return NO_ANSWER
    text = ", ".join(normalize_answer(str(a)) for a in answer) if isinstance(answer, list) else normalize_answer(str(answer))
    return text or NO_ANSWER


def answer_text(answer: Any) -> str | None:
    """One string for an answer: a list's items joined with " || " (env/rewards/answer-match.ts' answerText); None stays None."""
    if answer is None:
        return None
    return " || ".join(str(a) for a in answer) if isinstance(answer, list) else str(answer)
