"""ContentNormalizer: the write track's first stage, folding surface forms into canonical tokens.

"dinner next Wednesday night at 7" and "2026-03-11 19:00 dinner" must look alike to Dedup, and "ＡＢＣ" and "ABC"
must be one entity. The stage chains five passes, in this order:

1. ``preprocess_chinese``: full-width folding, CJK punctuation to ASCII, zero-width removal, whitespace
   collapse;
2. ``TemporalNormalizer``: dates and date-times to ISO-8601 (needs the turn's timestamp);
3. ``CurrencyNormalizer``: money to ``{amount, currency}``;
4. ``ProportionNormalizer``: shares to a float in [0, 1];
5. ``DurationNormalizer``: lengths of time to ISO-8601 durations.

Spans never overlap: each pass runs on the text with the spans of the passes before it masked out, so "3 days
ago" is a date and never also a duration "3 days", and "3/12" is a date and never the fraction 0.25.

``normalize`` never raises on a string: every pass is regex-driven with bounded numbers, and values that
cannot be built (dates out of range, absurd offsets) are skipped as non-matches inside the passes.
"""

from __future__ import annotations

from datetime import datetime

from .chinese import preprocess_chinese
from .currency import CurrencyNormalizer
from .duration import DurationNormalizer
from .proportion import ProportionNormalizer
from .spans import NormalizedContent, NormalizedSpan, mask, render
from .temporal import TemporalNormalizer, as_aware


class ContentNormalizer:
    """``ContentNormalizer().normalize(text, ref_time)`` -> ``NormalizedContent`` (see module docs)."""

    def __init__(
        self,
        *,
        temporal: TemporalNormalizer | None = None,
        currency: CurrencyNormalizer | None = None,
        proportion: ProportionNormalizer | None = None,
        duration: DurationNormalizer | None = None,
    ) -> None:
        self.temporal = temporal or TemporalNormalizer()
        self.currency = currency or CurrencyNormalizer()
        self.proportion = proportion or ProportionNormalizer()
        self.duration = duration or DurationNormalizer()

    def normalize(self, text: str, ref_time: datetime) -> NormalizedContent:
        """Canonical form of ``text``; relative dates resolve against ``ref_time`` (naive means UTC)."""
        preprocessed = preprocess_chinese(text)
        ref = as_aware(ref_time)
        spans: list[NormalizedSpan] = []
        masked = preprocessed
        for find in (
            lambda t: self.temporal.find(t, ref),
            self.currency.find,
            self.proportion.find,
            self.duration.find,
        ):
            found = find(masked)
            if found:
                spans.extend(found)
                masked = mask(masked, found)
        spans.sort(key=lambda s: s.start)
        return NormalizedContent(
            original=text,
            text=render(preprocessed, spans),
            spans=tuple(spans),
            preprocessed=preprocessed,
        )
