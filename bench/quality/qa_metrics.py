"""The QA bench's measures, pure: LoCoMo's own token-level F1, the judge's votes, bootstrap intervals.

- **F1** as LoCoMo's evaluation computes it (``task_eval/evaluation.py`` of the LoCoMo repository, the
  SQuAD recipe): lower-case, drop punctuation, drop the articles ``a an the`` (and ``and``), split on
  whitespace, Porter-stem each token (NLTK's stemmer), and take the F1 of the two token multisets.
  Per category as LoCoMo does: category 1 (multi-hop) splits the gold and the prediction at commas and
  averages, over the gold parts, the best F1 of any predicted part; category 3 scores against the first
  of the ``;``-separated gold alternatives; categories 2 and 4 score the whole strings.
- **Votes**: a judged answer is CORRECT when more than half of its votes say so; the agreement of a
  vote is the share of votes that agree with that majority.
- **Bootstrap**: the percentile interval of the mean over questions resampled with replacement (fixed
  seed: the same data give the same interval); the paired form resamples questions once for two rows.

Answers are compared without their citation brackets (``[F1, E2]``, ``[none]``): they are not words.
"""

from __future__ import annotations

import random
import re
import string
from collections import Counter
from collections.abc import Sequence
from functools import cache

_ARTICLES = re.compile(r"\b(a|an|the|and)\b")
_PUNCTUATION = str.maketrans("", "", string.punctuation)
_CITATION = re.compile(r"\[\s*(?:none|[FE]\d+(?:\s*[,;]?\s*[FE]\d+)*)\s*\]", re.IGNORECASE)


@cache
def _stemmer() -> object:
    from nltk.stem import PorterStemmer  # the stemmer LoCoMo's evaluation uses (no data download)

    return PorterStemmer()


def _stem(word: str) -> str:
    return str(_stemmer().stem(word))  # type: ignore[attr-defined]


def strip_citations(text: str) -> str:
    """``"Berlin [F1, E2]. Nothing else [none]"`` -> ``"Berlin. Nothing else"``."""
    return " ".join(_CITATION.sub("", text).replace(" .", ".").split())


def normalize_answer(text: str) -> str:
    """LoCoMo's normalization: commas dropped, lower case, punctuation dropped, articles dropped,
    whitespace collapsed."""
    lowered = text.replace(",", "").lower().translate(_PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", lowered).split())


def token_f1(prediction: str, gold: str) -> float:
    """Token-level F1 of two strings after :func:`normalize_answer` and Porter stemming."""
    predicted = [_stem(w) for w in normalize_answer(prediction).split()]
    expected = [_stem(w) for w in normalize_answer(gold).split()]
    same = sum((Counter(predicted) & Counter(expected)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(predicted), same / len(expected)
    return 2 * precision * recall / (precision + recall)


def locomo_f1(prediction: str, gold: str, category: int) -> float:
    """F1 of an answer to a question of LoCoMo ``category`` (the module docstring's rules)."""
    prediction, gold = strip_citations(prediction), str(gold)
    if category == 1:
        predicted = [p.strip() for p in prediction.split(",")]
        parts = [g.strip() for g in gold.split(",")]
        return sum(max(token_f1(p, g) for p in predicted) for g in parts) / len(parts)
    if category == 3:
        gold = gold.split(";")[0].strip()
    return token_f1(prediction, gold)


def majority(votes: Sequence[bool]) -> tuple[bool, float]:
    """(the verdict: more than half say CORRECT, the share of votes agreeing with it)."""
    if not votes:
        raise ValueError("majority needs at least one vote")
    yes = sum(votes)
    verdict = yes * 2 > len(votes)
    agreeing = yes if verdict else len(votes) - yes
    return verdict, agreeing / len(votes)


def settled(votes: Sequence[bool], of: int) -> bool:
    """Whether the majority of ``of`` votes is known from the first ``votes``: the votes not cast yet
    cannot change it (of 3 votes, two that agree settle it; the third is cast only when they differ)."""
    yes, left = sum(votes), of - len(votes)
    return left <= 0 or yes * 2 > of or (yes + left) * 2 <= of


def bootstrap_ci(
    values: Sequence[float], *, resamples: int = 1000, seed: int = 0, level: float = 0.95
) -> tuple[float, float]:
    """The percentile bootstrap interval of the mean of ``values`` at ``level``."""
    if not values:
        raise ValueError("bootstrap_ci needs at least one value")
    rng = random.Random(seed)
    n = len(values)
    means = sorted(sum(values[rng.randrange(n)] for _ in range(n)) / n for _ in range(resamples))
    return _percentiles(means, level)


def paired_bootstrap_ci(
    a: Sequence[float], b: Sequence[float], *, resamples: int = 1000, seed: int = 0, level: float = 0.95
) -> tuple[float, float]:
    """The interval of mean(a) - mean(b), questions resampled together (``a[i]`` and ``b[i]`` are the
    same question answered two ways)."""
    if len(a) != len(b) or not a:
        raise ValueError("paired_bootstrap_ci needs two equally long, non-empty series")
    return bootstrap_ci(
        [x - y for x, y in zip(a, b, strict=True)], resamples=resamples, seed=seed, level=level
    )


def _percentiles(ordered: Sequence[float], level: float) -> tuple[float, float]:
    tail = (1 - level) / 2
    last = len(ordered) - 1
    return ordered[round(tail * last)], ordered[round((1 - tail) * last)]
