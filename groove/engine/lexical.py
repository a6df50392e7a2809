"""The lexical leg: which FTS table a query reads, and the MATCH expression for that table.

The index holds every chunk in two FTS5 tables with the same columns and rowids:
``trigram`` (substrings of 3+ characters: finds Japanese and any other script without a
segmenter) and ``porter`` (``porter unicode61``: whole words with English stems, which ranks
English better: on Cranfield, porter + vector beats trigram + vector on nDCG@10, see
docs/search.md). ``--lexical`` (or ``lexical=`` in the API), else ``[search] lexical`` in
groove.toml, picks the table:

* ``"trigram"``: every query through the seed's compiler (``engine.query``) on the trigram
  table: exactly groove's behaviour before the porter table existed.
* ``"porter"``: every query compiled into words (below) on the porter table.
* ``"auto"``: routed by script (``route``). A query goes to porter when its positive text
  (exclusions cut out) has at least one Latin letter and no letter of another script, and
  no exclusion term has a letter of another script (porter's ``unicode61`` would read
  ``-ロールバック`` as one unknown word and exclude nothing; the trigram table honours it);
  anything else goes to trigram: a query with kanji or kana, a mixed query (Latin words
  with Japanese, e.g. ``RRF の定数 k``: porter's ``unicode61`` reads a run of Japanese as
  one "word" that no chunk holds, so the Japanese half would be lost; measured in
  docs/search.md), a query in another script (unmeasured, so the seed's leg), and a query
  with no letter at all. Digits and punctuation do not decide.

When groove.toml names no mode, the index decides (``mode_for_index``): an index built
before the porter table existed keeps ``trigram`` (recorded by the schema migration that
added the table), a new one uses ``DEFAULT_LEXICAL``.

Porter compiler. It reads the same syntax as the trigram compiler (double quotes and a
leading ``-``, ``engine.query`` step 1) and emits:

* plain positive text: its words (maximal runs of letters and digits, as ``unicode61`` cuts
  them), lower-cased, de-duplicated, each quoted, OR-ed; capped at ``MAX_PHRASES`` like
  the trigram phrases (the same warning);
* a quoted region: one phrase, verbatim (FTS5 reads it as those words in sequence), when it
  holds a word and no NUL;
* an exclusion: a quoted one is one phrase; an unquoted term is cut at Separator characters
  (the trigram compiler's class), each piece one phrase (``-foo-bar`` excludes the words
  ``foo bar`` in sequence, ``-foo,bar`` excludes ``foo`` and ``bar``). Stems apply, so
  ``-indexes`` also excludes ``index``. A term with no word cannot be enforced and is
  reported, as the trigram side reports a term under its 3-character floor.

No positive word leaves ``match`` None: vector-only search, as for the trigram compiler.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, replace

from groove.engine.query import (
    HIRAGANA,
    KANJI,
    KATAKANA,
    MAX_PHRASES,
    SEPARATOR,
    CompiledQuery,
    char_class,
    compile_query,
    scan_segments,
)
from groove.settings import LexicalMode
from groove.store.legs import PORTER, TRIGRAM, LexicalTable
from groove.store.meta import IndexMeta

#: The mode of a new index when groove.toml names none (chosen by measurement: docs/search.md).
DEFAULT_LEXICAL: LexicalMode = "auto"

_WORD = re.compile(r"[^\W_]+")
_CJK = (KANJI, HIRAGANA, KATAKANA)


@dataclass(frozen=True)
class LexicalQuery:
    """A query compiled for one FTS table: ``leg`` names the table, ``terms`` its phrases."""

    leg: LexicalTable
    terms: CompiledQuery

    @property
    def match(self) -> str | None:
        return self.terms.match

    @property
    def negative_match(self) -> str | None:
        return self.terms.negative_match

    @property
    def warnings(self) -> tuple[str, ...]:
        if self.leg == TRIGRAM:
            return self.terms.warnings
        # The cap warning reads the same for both tables; the exclusion one does not.
        out = list(replace(self.terms, dropped_negative=()).warnings)
        out.extend(
            f"exclusion -{term} holds no word for the porter index and was not applied"
            for term in self.terms.dropped_negative
        )
        return tuple(out)


def mode_for_index(configured: LexicalMode | None, meta: IndexMeta) -> LexicalMode:
    """The mode a search uses: the configured one (--lexical, else groove.toml's), else the
    index's recorded one, else the default."""
    if configured is not None:
        return configured
    if meta.lexical_default == TRIGRAM:
        return "trigram"
    if meta.lexical_default == PORTER:
        return "porter"
    return DEFAULT_LEXICAL


def route(compiled: CompiledQuery, mode: LexicalMode) -> LexicalTable:
    """The table ``mode`` sends this query to (the rule in the module docstring)."""
    if mode == "trigram":
        return TRIGRAM
    if mode == "porter":
        return PORTER
    if not all(_latin_only(term) for term in (*compiled.negative, *compiled.dropped_negative)):
        return TRIGRAM  # porter would read the term as one unknown word: not excluded
    latin = False
    for c in compiled.positive_text:
        if not c.isalpha():
            continue  # digits, punctuation and spaces do not decide
        if not _is_latin(c):
            return TRIGRAM
        latin = True
    return PORTER if latin else TRIGRAM


def _is_latin(c: str) -> bool:
    return char_class(c) not in _CJK and unicodedata.name(c, "").startswith("LATIN")


def _latin_only(text: str) -> bool:
    """Whether every letter of ``text`` is Latin (a text with no letter is)."""
    return all(_is_latin(c) for c in text if c.isalpha())


def lexical_query(
    text: str, mode: LexicalMode, compiled: CompiledQuery | None = None
) -> LexicalQuery:
    """Route ``text`` and compile it for its table. ``compiled``: its trigram compilation."""
    compiled = compiled or compile_query(text)
    leg = route(compiled, mode)
    if leg == TRIGRAM:
        return LexicalQuery(TRIGRAM, compiled)
    return LexicalQuery(PORTER, compile_porter(text, compiled))


def trigram_query(compiled: CompiledQuery) -> LexicalQuery:
    """The seed's query: ``compiled`` on the trigram table."""
    return LexicalQuery(TRIGRAM, compiled)


def compile_porter(text: str, compiled: CompiledQuery | None = None) -> CompiledQuery:
    """The porter table's phrases for ``text`` (rules in the module docstring).

    Raises QueryError for the queries the trigram compiler rejects (empty, only exclusions).
    """
    compiled = compiled or compile_query(text)
    positive: list[str] = []
    negative: list[str] = []
    unenforced: list[str] = []
    for segment, quoted, excluded in scan_segments(text):
        if quoted:
            phrases = [segment] if _WORD.search(segment) and "\0" not in segment else []
        elif excluded:
            phrases = [piece for piece in _pieces(segment) if _WORD.search(piece)]
        else:
            phrases = [word.lower() for word in _WORD.findall(segment)]
        if not excluded:
            positive.extend(phrases)
            continue
        negative.extend(phrases)
        if not phrases:
            unenforced.append(segment)
    distinct = tuple(dict.fromkeys(positive))
    return CompiledQuery(
        positive=distinct[:MAX_PHRASES],
        negative=tuple(dict.fromkeys(negative)),
        dropped_positive=max(0, len(distinct) - MAX_PHRASES),
        dropped_negative=tuple(dict.fromkeys(unenforced)),
        positive_text=compiled.positive_text,
    )


def _pieces(term: str) -> list[str]:
    """``term`` cut at Separator characters, empty pieces dropped."""
    pieces: list[str] = []
    start = 0
    for i, c in enumerate(term):
        if char_class(c) == SEPARATOR:
            pieces.append(term[start:i])
            start = i + 1
    pieces.append(term[start:])
    return [p for p in pieces if p]
