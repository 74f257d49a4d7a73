"""The one tokenizer behind every lexical backend, so BM25 scores are comparable across them.

Rules (deterministic, no locale or hash-seed dependence):
- Unicode NFKC, casefold; Greek letters spelt out (``TNF-α`` and ``TNF-alpha`` give the same tokens).
- Possessive ``'s`` dropped; decimals such as ``0.05`` kept whole.
- Hyphen/slash compounds: joined without the separator when any part holds a digit (``IL-6`` -> ``il6``,
  ``COVID-19`` -> ``covid19``, so they match ``IL6``); split into words otherwise (``long-term`` ->
  ``long``, ``term``, matching the unhyphenated spelling).
- English stop words (bm25s's NLTK-style list) and abstract boiler-plate (headings, hedges) dropped.
- Snowball English stemming (PyStemmer) of purely alphabetic tokens when ``stem=True``; a stem that is a stop
  word is dropped ("resulted" -> "result"), but a word whose stem is a stop word of one or two letters stays
  whole: "ALS" stems to "al" (of "et al"), "AEDs" to "a", and amyotrophic lateral sclerosis was never indexed.
"""

from __future__ import annotations

import re
import string
import threading
import unicodedata
from collections.abc import Callable, Iterable
from functools import lru_cache

import Stemmer
from bm25s.stopwords import STOPWORDS_EN_PLUS

_GREEK = {
    "α": "alpha", "β": "beta", "γ": "gamma", "δ": "delta", "ε": "epsilon", "ζ": "zeta", "η": "eta",
    "θ": "theta", "ι": "iota", "κ": "kappa", "λ": "lambda", "μ": "mu", "ν": "nu", "ξ": "xi",
    "ο": "omicron", "π": "pi", "ρ": "rho", "σ": "sigma", "ς": "sigma", "τ": "tau", "υ": "upsilon",
    "φ": "phi", "χ": "chi", "ψ": "psi", "ω": "omega",
}  # fmt: skip
_GREEK_TABLE = str.maketrans({k: f" {v} " for k, v in _GREEK.items()})

# Words that occur in most abstracts or questions and carry no topic: section headings, hedges, fillers.
# Dropping them keeps rank-bm25's epsilon floor (terms in > half the docs) from dominating short queries.
ABSTRACT_STOPWORDS = frozenset(
    """
    background backgrounds objective objectives aim aims purpose method methods result results
    conclusion conclusions introduction discussion summary abstract design setting settings
    also however thus therefore although whether may might can could would should must
    among within without via using used use uses per versus vs et al ie eg etc
    """.split()
)
# bm25s's NLTK-style English list, minus single letters that name things here (vitamin D, T cell).
_KEEP_LETTERS = frozenset("dtmoy")
STOPWORDS: frozenset[str] = (frozenset(STOPWORDS_EN_PLUS) - _KEEP_LETTERS) | ABSTRACT_STOPWORDS

# A "word" is a run of letters/digits, optionally joined by hyphens or slashes; decimals stay whole.
_WORD = re.compile(r"\d+\.\d+|[^\W_]+(?:[-/][^\W_]+)*")
_POSSESSIVE = re.compile(r"[’']s\b")
_HAS_DIGIT = re.compile(r"\d")
_SEP = re.compile(r"[-/]")

_local = threading.local()  # PyStemmer objects are not thread-safe: one per thread


def _stemmer() -> Stemmer.Stemmer:
    stemmer = getattr(_local, "stemmer", None)
    if stemmer is None:
        stemmer = _local.stemmer = Stemmer.Stemmer("english")
    return stemmer


def stem_words(words: list[str]) -> list[str]:
    """Snowball English stems of lower-cased words (the tokenizer's stemmer; safe across threads)."""
    return list(_stemmer().stemWords(words))


def compound_parts(word: str) -> list[str]:
    """A hyphen/slash compound's words as written: the compound itself when a part holds a digit (``IL-6``),
    its parts otherwise (``long-term`` -> ``long``, ``term``); any other word alone."""
    if _SEP.search(word) and not _HAS_DIGIT.search(word):
        return _SEP.split(word)
    return [word]


def _words(text: str) -> list[str]:
    text = unicodedata.normalize("NFKC", text).casefold().translate(_GREEK_TABLE)
    text = _POSSESSIVE.sub("", text)
    return [_SEP.sub("", part) for match in _WORD.finditer(text) for part in compound_parts(match.group())]


def tokenize(text: str, stem: bool = True) -> list[str]:
    """Lower-cased, stop-word-free, optionally stemmed tokens of ``text`` (see module doc for the rules)."""
    words = [w for w in _words(text) if w not in STOPWORDS]
    if not stem:
        return words
    stemmer = _stemmer()
    alpha = [i for i, w in enumerate(words) if w.isalpha()]
    stems = stemmer.stemWords([words[i] for i in alpha])
    for i, s in zip(alpha, stems, strict=True):
        words[i] = words[i] if len(s) <= 2 and s in STOPWORDS else s
    return [w for w in words if w not in STOPWORDS]


def tokenize_many(texts: Iterable[str], stem: bool = True) -> list[list[str]]:
    """``tokenize`` over many texts (same tokens as calling it one by one)."""
    return [tokenize(text, stem=stem) for text in texts]


_LETTERS = string.ascii_lowercase + string.digits
MIN_RESPELL_LENGTH = 6  # tokens shorter than this are too close to other words to guess at


def respellings(token: str, known: Callable[[str], int | None]) -> list[str]:
    """Known tokens (`known(t)`: a document frequency, 0 or None when unseen) that a token the index never saw
    may be a typo of: the same with one letter put back ("cirrot" -> "cirrhot", "sertalin" -> "sertralin") or
    two neighbours swapped back. Only dropped and swapped letters, the commonest slips, in tokens of >=
    MIN_RESPELL_LENGTH letters: one *changed* letter turns words into other words ("stapes" -> "stage",
    "rewarming" -> "reward") that any evidence would contain."""
    if len(token) < MIN_RESPELL_LENGTH or known(token) or not token.isalnum():
        return []
    cuts = [(token[:i], token[i:]) for i in range(len(token) + 1)]
    put_back = {a + c + b for a, b in cuts for c in _LETTERS}
    swapped = {a + b[1] + b[0] + b[2:] for a, b in cuts if len(b) > 1 and b[0] != b[1]}
    return sorted(t for t in put_back | swapped if known(t))


# British -> American spelling of a stem: ae -> e (haem-, anaem-, paed-), oe -> e after a consonant or at the
# start (oesophag-, diarrhoea, foetal), -our -> -or, -is(e) -> -iz(e), -ys(e) -> -yz(e); stems of 5+ letters
# ("doe" is not "de").
_SPELLINGS = [
    (re.compile(r"ae"), "e"),
    (re.compile(r"(?:(?<=[^aeiou])|^)oe"), "e"),
    (re.compile(r"our$"), "or"),
    (re.compile(r"(?<=[^aeiouy])is$"), "iz"),
    (re.compile(r"ys$"), "yz"),
]


@lru_cache(maxsize=1 << 16)  # evidence relevance spells every term of every sentence it scores
def american_spelling(stem: str) -> str:
    """The stem as American spelling writes it ("haemolyt" -> "hemolyt", "randomis" -> "randomiz")."""
    if len(stem) < 5 or not stem.isalpha():
        return stem
    for pattern, repl in _SPELLINGS:
        stem = pattern.sub(repl, stem)
    return stem
