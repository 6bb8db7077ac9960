"""Answers compared as the scorer compares them (env/rewards/normalize.ts, protocol/answer-text.ts):
NFKC, lower case, punctuation and symbols to spaces, articles dropped unless nothing is left. The
evaluation summary's answer grid and the counterfactual replay's `changed` both read answers so."""
from __future__ import annotations

import re
import unicodedata
from typing import Any

NO_ANSWER = "(no answer)"
_ARTICLES = re.compile(r"\b(?:a|an|the)\b")


def normalize_answer(text: str) -> str:
    lowered = unicodedata.normalize("NFKC", text).lower()
    spaced = "".join(" " if unicodedata.category(ch)[0] in "PS" else ch for ch in lowered)
    base = " ".join(spaced.split())
    without = " ".join(_ARTICLES.sub(" ", base).split())
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
