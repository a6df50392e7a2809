"""Compile a user's search query into one FTS5 MATCH expression (fts_query_version 3).

The FTS table is tokenized with ``trigram``, so a phrase matches a row when its text occurs
in the row as a substring (case- and diacritic-insensitive) and a phrase shorter than
``MIN_PHRASE_CHARS`` (3) characters can never match. The compiler therefore cuts a query
into phrases of at least 3 characters, each a contiguous piece of the query, and ORs them.
There is no operator syntax: ``AND``, ``OR``, ``NOT`` and ``heading:foo`` are plain text
(``:`` is a separator, so ``heading:foo`` gives the phrases ``heading`` and ``foo``).
The only syntax is the double quote and, new in version 3, a leading ``-``.

1. Scan. A ``"`` opens a quoted region; inside it ``""`` stands for one ``"`` and a single
   ``"`` closes it. A ``-`` that starts a whitespace-separated token (it is the first
   character of the query or follows a ``str.isspace`` character, U+3000 included) opens an
   exclusion when the next character is:

   * ``"`` and the quote closes: ``-"foo bar"`` excludes the quoted text verbatim;
   * a word character (any class below but Separator) other than ``-``: the exclusion
     term runs from there to the next whitespace (``-foo,bar`` excludes ``foo`` and
     ``bar``; a ``"`` inside the term is just a separator).

   Everything else is positive text. So ``a-b``, ``foo,-bar`` and ``"foo"-bar`` hold no
   exclusion, and ``-`` alone, ``- foo``, ``--foo`` and ``---`` stay literal as in version 2.
   A ``"`` that never closes turns the rest of the query, from the end of the last quoted
   region or exclusion and including that ``"``, into positive plain text (so ``-"abc``
   and any ``-`` after an unclosed quote are literal).
2. Quoted region: one phrase, verbatim, unless it has fewer than 3 characters or holds a
   NUL (FTS5 reads the expression as a C string), in which case it is dropped.
3. Plain text is cut at Separator characters into groups, and each group into runs of one
   class. Classes: Kanji = U+4E00-9FFF, U+3400-4DBF, U+F900-FAFF, U+2F800-2FA1F, 々, 〆;
   Hiragana = U+3041-309F; Katakana = U+30A1-30FF (with ー and ・) and U+FF66-FF9F;
   OtherWord = any other ``str.isalnum()`` character, ``_`` and ``-``; Separator = the
   rest (whitespace, punctuation, quotes, ``:``, U+FF65 ･, NUL...).
4. Each group emits phrases left to right and never joins across a group boundary:
   a run of >= 3 characters is a phrase; a shorter run is joined with the runs after it
   until the joined text reaches 3 characters, and when more than one run was joined and
   the last one alone had >= 3 characters that run is emitted too, right after
   (``の再ランキング`` -> ``の再ランキング``, ``ランキング``). Short runs left at the end of
   a group extend the group's last phrase to the group's end, the old phrase following it
   (``システム化`` -> ``システム化``, ``システム``); with no earlier phrase they are dropped.
5. Positive phrases are de-duplicated (first occurrence kept) and capped at ``MAX_PHRASES``
   (32); ``dropped_positive`` counts the distinct phrases the cap cut, so the caller can
   warn once per search.
6. When the text yields no positive phrase, each positive region (the query with its
   exclusions cut out; the whole query when it has none) falls back to one phrase: the
   region trimmed, if it has >= 3 characters and no NUL. ``AI と ML`` -> ``"AI と ML"``.

Exclusion terms go through the same steps 2-4 (``-再ランキング`` excludes ``再ランキング``
and ``ランキング``). A term that yields no phrase falls back to the whole term when it has
>= 3 characters and no NUL (``-AI/ML`` excludes ``AI/ML``); otherwise, being under the
trigram floor, it cannot be enforced: it is left out and listed in ``dropped_negative``
for the caller to warn about. Excluded phrases are de-duplicated but not capped: dropping
one would silently return rows the user asked to remove, and their number is bounded by
the query's length.

Result, with P = positive phrases and N = excluded phrases, each quoted by doubling ``"``:

    match = None                                   if P is empty (vector-only search)
          = "p1" OR "p2" ...                       if N is empty (same bytes as version 2)
          = ("p1" OR "p2" ...) NOT ("n1" OR ...)   otherwise

Both sides are parenthesised because FTS5 binds NOT tighter than OR. The search uses
``negative_match`` alone to drop excluded rows from the vector leg, and embeds
``positive_text`` (the query with its exclusions cut out).

Errors (``QueryError``): an empty or whitespace-only query, and a query made only of
exclusions (nothing but whitespace is left once they are cut out). ``xy -abc z`` is not
rejected: its positive text ``xy z`` still feeds the vector leg, though no phrase reaches
the FTS leg.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from groove.errors import QueryError

FTS_QUERY_VERSION = 3
MIN_PHRASE_CHARS = 3
MAX_PHRASES = 32

# Character classes (step 3).
KANJI, HIRAGANA, KATAKANA, OTHER_WORD, SEPARATOR = range(5)

_KANJI_RANGES = ((0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F))
_CLASS_CACHE: dict[str, int] = {}


def char_class(c: str) -> int:
    """The class of one character: KANJI, HIRAGANA, KATAKANA, OTHER_WORD or SEPARATOR."""
    cls = _CLASS_CACHE.get(c)
    if cls is None:
        cls = _classify(c)
        if len(_CLASS_CACHE) < 65536:  # bounded: arbitrary input cannot grow it forever
            _CLASS_CACHE[c] = cls
    return cls


def _classify(c: str) -> int:
    # CJK first: str.isalnum() is true for kanji and kana too.
    o = ord(c)
    if c in "々〆" or any(lo <= o <= hi for lo, hi in _KANJI_RANGES):
        return KANJI
    if 0x3041 <= o <= 0x309F:
        return HIRAGANA
    if 0x30A1 <= o <= 0x30FF or 0xFF66 <= o <= 0xFF9F:
        return KATAKANA
    if c.isalnum() or c in "_-":
        return OTHER_WORD
    return SEPARATOR


def quote_phrase(p: str) -> str:
    """One FTS5 string: ``p`` in double quotes, each inner ``"`` doubled. ``p`` has no NUL."""
    return '"' + p.replace('"', '""') + '"'


def _or_join(phrases: tuple[str, ...]) -> str | None:
    return " OR ".join(quote_phrase(p) for p in phrases) if phrases else None


@dataclass(frozen=True)
class CompiledQuery:
    """A query compiled for the FTS leg; ``match`` is what goes after ``MATCH``."""

    positive: tuple[str, ...]
    negative: tuple[str, ...]
    dropped_positive: int
    dropped_negative: tuple[str, ...]
    positive_text: str  # the query with exclusions cut out: what the vector leg embeds

    @property
    def positive_match(self) -> str | None:
        return _or_join(self.positive)

    @property
    def negative_match(self) -> str | None:
        return _or_join(self.negative)

    @cached_property  # asked several times per query (each leg, --explain's passes)
    def match(self) -> str | None:
        positive, negative = self.positive_match, self.negative_match
        if positive is None or negative is None:
            return positive
        return f"({positive}) NOT ({negative})"

    @property
    def warnings(self) -> tuple[str, ...]:
        """One line per thing the compiled expression leaves out of what the query asked."""
        out = []
        if self.dropped_positive:
            out.append(
                f"query has more than {MAX_PHRASES} phrases: the last "
                f"{self.dropped_positive} were not searched"
            )
        out.extend(
            f"exclusion -{term} is under the {MIN_PHRASE_CHARS}-character trigram floor "
            "and was not applied"
            for term in self.dropped_negative
        )
        return tuple(out)


@dataclass(frozen=True)
class _Segment:
    text: str
    quoted: bool
    excluded: bool


@dataclass(frozen=True)
class _Scan:
    segments: tuple[_Segment, ...]
    excluded_spans: tuple[tuple[int, int], ...]  # [start, end) of each exclusion, `-` included


def compile_query(text: str) -> CompiledQuery:
    """Compile ``text`` (rules in the module docstring). Raises QueryError."""
    if not text.strip():
        raise QueryError("empty query", hint="type at least one word to search for (3+ characters)")
    scan = _scan(text)
    regions = _positive_regions(text, scan.excluded_spans)
    positive_text = text
    if scan.excluded_spans:
        positive_text = " ".join(s for r in regions if (s := r.strip()))
    if not positive_text.strip():
        raise QueryError(
            "query has only exclusions (-term): nothing is left to search for",
            hint='add a term to search for, or quote a leading hyphen ("-term") to find it',
        )
    positive, negative, unenforced = _phrases(scan.segments)
    if not positive:
        positive = [p for r in regions for p in _fallback(r)]
    kept, dropped = _dedupe_and_cap(positive)
    return CompiledQuery(
        positive=kept,
        negative=tuple(dict.fromkeys(negative)),
        dropped_positive=dropped,
        dropped_negative=tuple(dict.fromkeys(unenforced)),
        positive_text=positive_text,
    )


def scan_segments(text: str) -> tuple[tuple[str, bool, bool], ...]:
    """Step 1 of ``text`` as ``(text, quoted, excluded)`` segments: the syntax (quotes and
    ``-term``) that the porter compiler (``engine.lexical``) reads the same way."""
    return tuple((s.text, s.quoted, s.excluded) for s in _scan(text).segments)


def _phrases(segments: tuple[_Segment, ...]) -> tuple[list[str], list[str], list[str]]:
    """Positive phrases, excluded phrases, and the exclusion terms that gave no phrase."""
    positive: list[str] = []
    negative: list[str] = []
    unenforced: list[str] = []
    for seg in segments:
        if not seg.excluded:
            positive.extend(_segment_phrases(seg))
            continue
        found = _segment_phrases(seg) or _fallback(seg.text)
        negative.extend(found)
        if not found:
            unenforced.append(seg.text)
    return positive, negative, unenforced


def _scan(text: str) -> _Scan:
    """Step 1: cut ``text`` into plain, quoted and excluded segments."""
    segments: list[_Segment] = []
    spans: list[tuple[int, int]] = []
    plain_start = i = 0
    at_token_start = True
    n = len(text)
    while i < n:
        c = text[i]
        if c == '"' or (c == "-" and at_token_start and _opens_exclusion(text, i + 1)):
            excluded = c == "-"
            found = _read_segment(text, i + 1 if excluded else i)
            if found is None:
                break  # unclosed quote: the rest is plain text
            seg_text, quoted, end = found
            if plain_start < i:
                segments.append(_Segment(text[plain_start:i], quoted=False, excluded=False))
            segments.append(_Segment(seg_text, quoted=quoted, excluded=excluded))
            if excluded:
                spans.append((i, end))
            plain_start = i = end
            # A quote closes mid-token; an unquoted exclusion stops before whitespace.
            at_token_start = not quoted
            continue
        at_token_start = c.isspace()
        i += 1
    if plain_start < n:
        segments.append(_Segment(text[plain_start:], quoted=False, excluded=False))
    return _Scan(tuple(segments), tuple(spans))


def _opens_exclusion(text: str, i: int) -> bool:
    if i >= len(text):
        return False
    c = text[i]
    return c == '"' or (c != "-" and char_class(c) != SEPARATOR)


def _read_segment(text: str, i: int) -> tuple[str, bool, int] | None:
    """The segment starting at ``i``: (content, quoted, end), or None for an unclosed quote."""
    if text[i] != '"':
        end = i
        while end < len(text) and not text[end].isspace():
            end += 1
        return text[i:end], False, end
    parts: list[str] = []
    j = i + 1
    while True:
        k = text.find('"', j)
        if k < 0:
            return None
        parts.append(text[j:k])
        if text.startswith('"', k + 1):  # doubled quote: a literal `"`, keep reading
            parts.append('"')
            j = k + 2
            continue
        return "".join(parts), True, k + 1


def _positive_regions(text: str, spans: tuple[tuple[int, int], ...]) -> list[str]:
    """``text`` with each excluded span cut out, as the pieces between them."""
    regions, start = [], 0
    for lo, hi in spans:
        regions.append(text[start:lo])
        start = hi
    regions.append(text[start:])
    return regions


def _segment_phrases(seg: _Segment) -> list[str]:
    if seg.quoted:  # step 2
        ok = len(seg.text) >= MIN_PHRASE_CHARS and "\0" not in seg.text
        return [seg.text] if ok else []
    return [p for group in _groups(seg.text) for p in _emit_group(group)]


def _groups(text: str) -> list[list[str]]:
    """Step 3: the groups of ``text``, each as its list of same-class runs."""
    groups: list[list[str]] = []
    runs: list[str] = []
    run_start, prev = 0, SEPARATOR
    for i, c in enumerate(text):
        cls = char_class(c)
        if cls != prev:
            if prev != SEPARATOR:
                runs.append(text[run_start:i])
            if cls == SEPARATOR and runs:
                groups.append(runs)
                runs = []
            run_start, prev = i, cls
    if prev != SEPARATOR:
        runs.append(text[run_start:])
    if runs:
        groups.append(runs)
    return groups


def _emit_group(runs: list[str]) -> list[str]:
    """Step 4: the phrases of one group, given its runs."""
    out: list[str] = []
    last: tuple[int, int] | None = None  # (index in out, first run) of the last phrase
    i, n = 0, len(runs)
    while i < n:
        j, size = i, 0
        while j < n and size < MIN_PHRASE_CHARS:
            size += len(runs[j])
            j += 1
        if size < MIN_PHRASE_CHARS:  # short runs at the group's end
            if last is not None:
                at, first = last
                out.insert(at + 1, out[at])
                out[at] = "".join(runs[first:])
            break
        last = (len(out), i)
        out.append("".join(runs[i:j]))
        if j - i > 1 and len(runs[j - 1]) >= MIN_PHRASE_CHARS:
            out.append(runs[j - 1])
        i = j
    return out


def _fallback(text: str) -> list[str]:
    """Step 6: ``text`` trimmed, as one phrase, when it can reach the index."""
    trimmed = text.strip()
    if len(trimmed) < MIN_PHRASE_CHARS or "\0" in trimmed:
        return []
    return [trimmed]


def _dedupe_and_cap(phrases: list[str]) -> tuple[tuple[str, ...], int]:
    """Step 5: distinct phrases in first-seen order, capped; and how many the cap cut."""
    distinct = tuple(dict.fromkeys(phrases))
    return distinct[:MAX_PHRASES], max(0, len(distinct) - MAX_PHRASES)
