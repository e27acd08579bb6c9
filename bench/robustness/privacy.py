"""Personal data caught at the door (issue 62 part 2): how well the redaction policy finds it, what it
replaces that is not personal data, and what it costs an ingestion.

    python -m bench privacy --locomo /work/shared/datasets/locomo/26.json \\
        --locomo /work/shared/datasets/locomo/30.json [--candidates]

Writes ``bench/results/privacy.json``:

- on the generated set (``privacy_set.generate``: fixed seed, ``messages`` chat turns, each piece of
  personal data at a known place): ``recall.<kind>`` (its pieces wholly covered by a span of its kind)
  and ``precision.<kind>`` (the spans of that kind that are on a piece of it) for email, phone, card,
  iban, ip and key; ``false_spans`` (spans on no piece at all: the near misses replaced);
- ``locomo.false_per_200``: spans found in the LoCoMo conversations given (which hold no such data:
  every one is a false replacement), per 200 messages, with ``locomo.messages``;
- ``time_ratio``: the wall time of ingesting the generated set with ``IngestOptions(redact=True)`` over
  the same without it (embedded store in a file, scripted model, hash embedder; the median of
  alternating runs), with ``time_off_ms_per_message`` and ``time_on_ms_per_message`` beside it;
  ``detect_ms_per_message``: the rules alone.

Person names (``Redaction(names=True)``: spaCy's tagger, ``epigraph.privacy.names``), when spaCy is
installed (``epigraph[local-model]``): on a generated set of chat turns seeded with known names
(``privacy_names.generate_named``) ``names.recall`` (names in a turn's text wholly covered by a PERSON
span), ``names.speaker_recall`` (the ``Speaker:`` of the turn), ``names.precision`` (PERSON spans on a
name) and ``names.false_spans`` (on no name: a place, a company, a weekday...); on LoCoMo, whose turns
name people freely, ``locomo.names.per_200`` (all PERSON spans), ``locomo.names.false_per_200`` (spans
judged no name at all: ``privacy_names.LOCOMO_JUDGED``), ``locomo.names.animals_per_200`` (pets'
names) and ``locomo.names.unjudged`` (spans the judged list lacks: then extend it by reading them).

``--candidates`` also measures the detectors installed beside the rules (Presidio, libphonenumber:
``privacy_detectors``) on the same set and LoCoMo and writes ``bench/results/privacy_candidates.json``
(the figures of docs/decisions/2026-12-01-personal-data.md).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from bench.robustness.privacy_detectors import Detector, Found, candidates, rules
from bench.robustness.privacy_ingest import ingest_seconds
from bench.robustness.privacy_names import LOCOMO_JUDGED, NamedMessage, generate_named
from bench.robustness.privacy_names import SEED as NAMES_SEED
from bench.robustness.privacy_set import KINDS, SEED, Message, generate
from bench.shared.results import write_results

MESSAGES = 600
PER = 200


def score(detect: Detector, messages: Sequence[Message]) -> tuple[dict[str, float], list[str]]:
    """Recall and precision per kind, the false spans and examples of misses and false spans."""
    found = covered = 0
    hits: Counter[str] = Counter()
    golds: Counter[str] = Counter()
    spans: Counter[str] = Counter()
    right: Counter[str] = Counter()
    false = 0
    examples: list[str] = []
    for m in messages:
        detected = detect(m.text)
        for kind, a, b in m.gold:
            golds[kind] += 1
            if any(k == kind and s <= a and b <= e for k, s, e in detected):
                hits[kind] += 1
            elif len(examples) < 40:
                examples.append(f"missed {kind}: {m.text[a:b]!r} in {m.text!r}")
        for kind, s, e in detected:
            spans[kind] += 1
            if any(k == kind and s < b and a < e for k, a, b in m.gold):
                right[kind] += 1
            elif not any(s < b and a < e for _, a, b in m.gold):
                false += 1
                if len(examples) < 40:
                    examples.append(f"false {kind}: {m.text[s:e]!r} in {m.text!r}")
        found += len(detected)
        covered += sum(1 for _ in m.gold)
    metrics: dict[str, float] = {"messages": len(messages), "false_spans": false}
    for kind in KINDS:
        metrics[f"recall.{kind}"] = round(hits[kind] / golds[kind], 4) if golds[kind] else 0.0
        metrics[f"precision.{kind}"] = round(right[kind] / spans[kind], 4) if spans[kind] else 0.0
        metrics[f"pieces.{kind}"] = golds[kind]
    return metrics, examples


def locomo_turns(paths: Sequence[Path]) -> list[tuple[str, str]]:
    """Every turn (speaker, text) of the LoCoMo conversations at ``paths`` (each a conversation's file)."""
    turns = []
    for path in paths:
        data = json.loads(path.read_text(encoding="utf-8"))
        n = 1
        while f"session_{n}" in data:
            turns += [(turn["speaker"], turn["text"]) for turn in data[f"session_{n}"]]
            n += 1
    return turns


def names_measure(
    messages: Sequence[NamedMessage], turns: Sequence[str]
) -> tuple[dict[str, float], list[str]]:
    """The tagger's person names on the generated named set and on LoCoMo's turns ("Speaker: text")."""
    from epigraph.privacy.names import person_names

    def tagged(text: str) -> Found:
        return [(s.kind, s.start, s.end) for s in person_names(text)]

    metrics, examples = score_names(tagged, messages)
    metrics["names.detect_ms_per_message"] = detect_ms(tagged, [m.text for m in messages])
    if turns:
        more, unjudged = locomo_names(tagged, turns)
        metrics.update(more)
        examples += unjudged
    return metrics, examples


def score_names(tagged: Detector, messages: Sequence[NamedMessage]) -> tuple[dict[str, float], list[str]]:
    """Recall of the names in the text and of the speaker, precision, spans on no name."""
    hits: Counter[bool] = Counter()
    golds: Counter[bool] = Counter()
    spans = right = 0
    examples: list[str] = []
    for m in messages:
        found = [(s, e) for _, s, e in tagged(m.text)]
        for a, b, speaker in m.gold:
            golds[speaker] += 1
            hits[speaker] += any(s <= a and b <= e for s, e in found)
            if not any(s <= a and b <= e for s, e in found) and len(examples) < 30:
                examples.append(f"names: missed {m.text[a:b]!r} in {m.text!r}")
        for s, e in found:
            spans += 1
            right += any(s < b and a < e for a, b, _ in m.gold)
            if not any(s < b and a < e for a, b, _ in m.gold) and len(examples) < 30:
                examples.append(f"names: false {m.text[s:e]!r} in {m.text!r}")
    return {
        "names.messages": len(messages),
        "names.pieces": golds[False],
        "names.recall": round(hits[False] / golds[False], 4),
        "names.speaker_recall": round(hits[True] / golds[True], 4),
        "names.precision": round(right / spans, 4) if spans else 0.0,
        "names.false_spans": spans - right,
    }, examples


def locomo_names(tagged: Detector, turns: Sequence[str]) -> tuple[dict[str, float], list[str]]:
    """LoCoMo's PERSON spans by their judgement (``LOCOMO_JUDGED``), per 200 turns."""
    texts = [turn[s:e] for turn in turns for _, s, e in tagged(turn)]
    judged = Counter(LOCOMO_JUDGED.get(text, "unjudged") for text in texts)
    per = PER / len(turns)
    return {
        "locomo.names.spans": len(texts),
        "locomo.names.per_200": round(len(texts) * per, 3),
        "locomo.names.person_share": round(judged["person"] / max(1, len(texts)), 4),
        "locomo.names.false_per_200": round(judged["no name"] * per, 3),
        "locomo.names.animals_per_200": round(judged["animal"] * per, 3),
        "locomo.names.unjudged": judged["unjudged"],
    }, [f"LoCoMo names: unjudged span {t!r}" for t in sorted(set(texts) - set(LOCOMO_JUDGED))]


def locomo_false(detect: Detector, texts: Sequence[str]) -> tuple[dict[str, float], list[str]]:
    false = [(kind, text[s:e]) for text in texts for kind, s, e in detect(text)]
    metrics = {"locomo.messages": len(texts), "locomo.false": len(false),
               "locomo.false_per_200": round(len(false) * PER / max(1, len(texts)), 3)}  # fmt: skip
    return metrics, [f"LoCoMo false {kind}: {value!r}" for kind, value in false[:20]]


def detect_ms(detect: Detector, texts: Sequence[str], repeat: int = 3) -> float:
    runs = []
    for _ in range(repeat):
        started = time.perf_counter()
        for text in texts:
            detect(text)
        runs.append((time.perf_counter() - started) * 1000 / len(texts))
    return round(statistics.median(runs), 4)


def measure(
    detect: Detector, messages: Sequence[Message], texts: Sequence[str]
) -> tuple[dict[str, float], list[str]]:
    metrics, examples = score(detect, messages)
    if texts:
        more, false = locomo_false(detect, texts)
        metrics.update(more)
        examples += false
    metrics["detect_ms_per_message"] = detect_ms(detect, [m.text for m in messages])
    return metrics, examples


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--locomo", type=Path, action="append", default=[],
        help="a LoCoMo conversation's JSON file (no personal data: every span found in it is false)",
    )  # fmt: skip
    parser.add_argument("--messages", type=int, default=MESSAGES, help="generated messages")
    parser.add_argument(
        "--runs", type=int, default=5, help="ingestions with the policy on and off, alternating"
    )
    parser.add_argument("--candidates", action="store_true", help="also measure Presidio and libphonenumber")
    parser.add_argument("--results-dir", type=Path, default=None)
    args = parser.parse_args(argv)
    messages = generate(args.messages)
    turns = locomo_turns(args.locomo)
    texts = [text for _, text in turns]
    metrics, examples = measure(rules, messages, texts)
    if importlib.util.find_spec("spacy") is not None:
        named, more = names_measure(generate_named(), [f"{speaker}: {text}" for speaker, text in turns])
        metrics.update(named)
        examples += more
    with tempfile.TemporaryDirectory() as scratch:
        off, on = asyncio.run(ingest_seconds(messages, Path(scratch), args.runs))
    metrics["time_off_ms_per_message"] = round(off * 1000 / len(messages), 3)
    metrics["time_on_ms_per_message"] = round(on * 1000 / len(messages), 3)
    metrics["time_ratio"] = round(on / off, 4)
    notes = [
        f"generated set: {len(messages)} messages, seed {SEED} (bench/robustness/privacy_set.py); names: "
        f"{len(generate_named())} turns, seed {NAMES_SEED} (bench/robustness/privacy_names.py)",
        "LoCoMo names: 'false' is a span judged no name at all (LOCOMO_JUDGED); the speakers, the people "
        "they name and their pets are names, and a tagger that replaces them does what it is asked",
        f"LoCoMo: {', '.join(p.name for p in args.locomo) or 'not given'}; every span found there is false",
        f"time: median of {args.runs} alternating ingestions each way, embedded store in a file, scripted "
        "model (bench/robustness/privacy_ingest.py), hash embedder",
        *examples,
    ]
    print(json.dumps(metrics, indent=2))
    print(f"wrote {write_results('privacy', metrics, notes, results_dir=args.results_dir)}")
    if args.candidates:
        compared: dict[str, float] = {}
        notes = [f"same generated set and LoCoMo files as privacy.json; {len(messages)} messages"]
        for name, detect in candidates().items():
            found, examples = measure(detect, messages, texts)
            compared.update({f"{name}.{k}": v for k, v in found.items()})
            notes += [f"{name}: {e}" for e in examples[:15]]
            print(name, json.dumps(found, indent=2), file=sys.stderr)
        print(f"wrote {write_results('privacy_candidates', compared, notes, results_dir=args.results_dir)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
