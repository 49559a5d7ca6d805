"""How much a class reads of the lesson: the words of each step's narration and measured figures,
in the language in use, so that the whole lesson fits a 45-minute class with its code running.

The limits (:data:`MOST_WORDS`, :data:`MOST_WORDS_A_STEP`) hold in every language the lesson is
translated into. What a class can skip is each step's ``more`` (the window's "More" fold, a note
after the step in the terminal) and is not counted. English words are what whitespace separates
(``torch.version.cuda`` is one). Chinese is not written in words: each run of Latin letters,
digits and code counts as one word, and every :data:`HAN_PER_WORD` Han characters as one, the
usual rule of thumb for a Chinese translation (1.5 to 2 characters an English word; this
lesson's catalogue has 1.76). Pure functions; no torch import.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from gpumon.i18n import tr
from gpumon.playground.lesson.step import LessonStep

#: Words read in all, narration and measured figures together: about ten minutes of reading
#: aloud at 150 words a minute, leaving the rest of a 45-minute class to the code and its
#: results.
MOST_WORDS = 1500
#: Words read in any one step.
MOST_WORDS_A_STEP = 150
#: Han characters that count as one word.
HAN_PER_WORD = 2

_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
#: A run of anything but spaces, Han characters and CJK punctuation: a Latin word, a number, code.
_LATIN = re.compile(r"[^\s\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]+")


def words(text: str) -> int:
    """The words of ``text``: whitespace-separated ones, or in a text with Han characters its
    Latin runs plus its Han characters over :data:`HAN_PER_WORD` (rounded up)."""
    han = len(_HAN.findall(text))
    if not han:
        return len(text.split())
    return len(_LATIN.findall(text)) + math.ceil(han / HAN_PER_WORD)


def step_words(step: LessonStep) -> int:
    """The words a class reads in ``step``, in the language in use: its narration and its
    measured figures (not ``more``, not the machine the figures were measured on)."""
    return sum(words(tr(text)) for text in (step.narration, step.measured) if text)


def lesson_words(steps: Sequence[LessonStep]) -> int:
    """The words a class reads in all of ``steps``, in the language in use."""
    return sum(step_words(s) for s in steps)


__all__ = ["HAN_PER_WORD", "MOST_WORDS", "MOST_WORDS_A_STEP", "lesson_words", "step_words",
           "words"]
