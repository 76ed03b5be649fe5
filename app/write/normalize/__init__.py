"""ContentNormalizer and its passes: the write track's normalize stage (overview in ``normalizer``)."""

from .chinese import preprocess_chinese
from .currency import CurrencyNormalizer
from .duration import DurationNormalizer
from .normalizer import ContentNormalizer
from .proportion import ProportionNormalizer
from .spans import NormalizedContent, NormalizedSpan
from .temporal import TemporalNormalizer

__all__ = [
    "ContentNormalizer",
    "CurrencyNormalizer",
    "DurationNormalizer",
    "NormalizedContent",
    "NormalizedSpan",
    "ProportionNormalizer",
    "TemporalNormalizer",
    "preprocess_chinese",
]
