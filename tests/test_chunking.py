"""Markdown -> frontmatter, chunks and breadcrumbs, rule by rule (spec §D), English and Japanese."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from groove.engine.chunking import (
    WHITESPACE,
    Chunk,
    breadcrumb,
    parse_markdown,
    title_from_filename,
)

# Each of these is at least 50 UTF-8 bytes, so it never merges.
ROLLBACK = "Rollback returns the service to the last release that passed its checks."
CANARY = "A canary sends a small share of traffic to the new build before everyone."
BACKUP_JA = "夜間バッチで全量バックアップを取得し、暗号化してから別リージョンへ転送する。"
KEEP_JA = "保管期間は三十日とし、期限切れの世代は自動で削除される。"


def chunks(text: str, rel_path: str = "notes/doc.md", exclude: tuple[str, ...] = ()) -> list:
    return list(parse_markdown(text, rel_path, exclude).chunks)


# ---- title from the file name ------------------------------------------------------------


def test_title_from_filename_drops_the_last_extension_only() -> None:
    assert title_from_filename("notes/code-review.ja.md") == "code review.ja"


def test_title_from_filename_turns_dashes_and_underscores_into_single_spaces() -> None:
    assert title_from_filename("a/b/My__Deploy--guide_.md") == "My Deploy guide"


def test_title_from_filename_keeps_japanese_and_dotfiles() -> None:
    assert title_from_filename("運用/障害_対応.md") == "障害 対応"
    assert title_from_filename(".hidden.md") == ".hidden"
    assert title_from_filename("README") == "README"


def test_title_from_filename_can_be_empty() -> None:
    assert title_from_filename("---.md") == ""


# ---- frontmatter -------------------------------------------------------------------------


def test_frontmatter_fields_and_body() -> None:
    text = (
        "---\ntitle: Release safety\ndate: 2024-1-2\ntopic: deploys\ndepth: 2\n"
        "tags: [ops, release]\n---\n\n" + ROLLBACK + "\n"
    )
    doc = parse_markdown(text, "ops/runbooks/rollback.md")
    assert doc.title == "Release safety"
    assert doc.frontmatter_title == "Release safety"
    assert doc.date == "2024-1-2"  # kept as written, not re-formatted as a date
    assert doc.topic == "deploys"
    assert doc.depth == 2
    assert doc.tags == ("ops", "release")
    assert doc.category == "ops"
    assert doc.body == ROLLBACK + "\n"
    assert doc.warnings == ()
    assert doc.chunks == (Chunk(0, None, None, ROLLBACK, "Release safety"),)


def test_category_and_topic_come_from_the_path_when_frontmatter_is_silent() -> None:
    deep = parse_markdown(ROLLBACK, "ops/runbooks/rollback.md")
    assert (deep.category, deep.topic) == ("ops", "runbooks")
    shallow = parse_markdown(ROLLBACK, "ops/rollback.md")
    assert (shallow.category, shallow.topic) == ("ops", None)
    top = parse_markdown(ROLLBACK, "rollback.md")
    assert (top.category, top.topic) == (None, None)
    assert top.title == "rollback"
    assert top.frontmatter_title is None


def test_bom_is_stripped_before_looking_for_frontmatter() -> None:
    doc = parse_markdown("\ufeff---\ntitle: バックアップ手順\n---\r\n\r\n" + BACKUP_JA, "ja/b.md")
    assert doc.title == "バックアップ手順"
    assert doc.body == BACKUP_JA


def test_crlf_frontmatter() -> None:
    doc = parse_markdown("---\r\ntitle: A\r\n---\r\n" + CANARY + "\r\n", "x.md")
    assert doc.title == "A"
    assert doc.body == CANARY + "\r\n"
    assert doc.chunks[0].content == CANARY


def test_unclosed_frontmatter_is_body() -> None:
    text = "---\ntitle: never closed\n" + CANARY
    doc = parse_markdown(text, "ops/canary.md")
    assert doc.title == "canary"
    assert doc.body == text
    assert doc.chunks[0].content == text


def test_frontmatter_must_start_the_text() -> None:
    text = "\n---\ntitle: late\n---\n" + CANARY
    doc = parse_markdown(text, "canary.md")
    assert doc.frontmatter_title is None
    assert doc.body == text


def test_closing_fence_is_the_first_newline_dashes() -> None:
    # The YAML ends at the first "\n---", even inside a longer run of dashes.
    doc = parse_markdown("---\ntitle: T\n-----\n" + CANARY, "c.md")
    assert doc.title == "T"
    assert doc.body == "--\n" + CANARY
    assert doc.chunks[0].content == "--\n" + CANARY


def test_yaml_error_warns_and_still_drops_the_block() -> None:
    doc = parse_markdown("---\ntitle: [unclosed\n---\n" + CANARY, "ops/canary.md")
    assert doc.title == "canary"
    assert doc.frontmatter_title is None
    assert doc.body == CANARY
    assert len(doc.warnings) == 1
    assert doc.warnings[0].startswith("frontmatter is not valid YAML and was ignored: ")
    assert "\n" not in doc.warnings[0]


def test_non_mapping_frontmatter_warns_and_is_empty() -> None:
    doc = parse_markdown("---\n- a\n- b\n---\n" + CANARY, "c.md")
    assert doc.warnings == ("frontmatter is not a key: value mapping and was ignored",)
    assert doc.tags == ()
    assert doc.body == CANARY


def test_empty_frontmatter_is_silent() -> None:
    doc = parse_markdown("---\n---\n" + CANARY, "c.md")
    assert doc.warnings == ()
    assert doc.body == CANARY


def test_blank_title_falls_back_to_the_file_name() -> None:
    doc = parse_markdown("---\ntitle: '   '\n---\n" + CANARY, "ops/canary-release.md")
    assert doc.title == "canary release"
    assert doc.frontmatter_title is None


def test_odd_field_types_warn_and_are_dropped() -> None:
    text = "---\ntitle: 2024\ntags: [a, 1, {x: 1}]\ndepth: deep\ntopic: [x]\n---\n" + CANARY
    doc = parse_markdown(text, "c.md")
    assert doc.title == "2024"
    assert doc.tags == ("a", "1")
    assert doc.depth is None
    assert doc.topic is None
    assert doc.warnings == (
        "frontmatter topic: expected a single value; ignored",
        "frontmatter depth: expected an integer, got 'deep'; ignored",
        "frontmatter tags: an entry is not a plain value and was dropped",
    )


def test_a_single_string_tag_is_one_tag() -> None:
    assert parse_markdown("---\ntags: runbook\n---\nx", "c.md").tags == ("runbook",)


# ---- headings and sections ---------------------------------------------------------------


def test_only_level_two_and_three_headings_split() -> None:
    text = f"# Title line\n{ROLLBACK}\n#### Deep\n##NoSpace\n## Canary\n{CANARY}\n"
    assert chunks(text, "ops/release.md") == [
        Chunk(0, None, None, f"# Title line\n{ROLLBACK}\n#### Deep\n##NoSpace", "release"),
        Chunk(1, "Canary", 2, CANARY, "release > Canary"),
    ]


def test_heading_lines_are_trimmed_and_removed_from_content() -> None:
    text = f"   ##   Rollback plan   \n{ROLLBACK}\n\t### Canary step \n{CANARY}"
    assert chunks(text, "r.md") == [
        Chunk(0, "Rollback plan", 2, ROLLBACK, "r > Rollback plan"),
        Chunk(1, "Canary step", 3, CANARY, "r > Rollback plan > Canary step"),
    ]


def test_no_lead_chunk_when_the_text_before_the_first_heading_is_blank() -> None:
    text = f"\n   \n## Rollback\n{ROLLBACK}"
    assert chunks(text, "r.md") == [Chunk(0, "Rollback", 2, ROLLBACK, "r > Rollback")]


def test_a_heading_with_no_text_is_kept() -> None:
    assert chunks("## Only a heading\n", "r.md") == [
        Chunk(0, "Only a heading", 2, "", "r > Only a heading")
    ]


def test_a_bare_hash_hash_is_text() -> None:
    assert chunks("##\n## \nword", "r.md") == [Chunk(0, None, None, "##\n## \nword", "r")]


def test_content_lines_join_with_newline_and_are_trimmed() -> None:
    text = f"## A\r\n\r\n  {ROLLBACK}\r\n\r\n{CANARY}  \r\n\r\n"
    assert chunks(text, "r.md") == [Chunk(0, "A", 2, f"{ROLLBACK}\n\n{CANARY}", "r > A")]


def test_headings_inside_code_fences_still_split() -> None:
    text = f"```\n## not really\n```\n{ROLLBACK}"
    assert chunks(text, "r.md") == [
        Chunk(0, None, None, "```", "r"),
        Chunk(1, "not really", 2, f"```\n{ROLLBACK}", "r > not really"),
    ]


# ---- merging small chunks ----------------------------------------------------------------


def test_a_small_chunk_is_appended_to_the_previous_one() -> None:
    text = f"{ROLLBACK}\n## Note\nshort text\n## Canary\n{CANARY}"
    assert chunks(text, "ops/r.md") == [
        Chunk(0, None, None, f"{ROLLBACK}\n\n## Note\n\nshort text", "r"),
        Chunk(1, "Canary", 2, CANARY, "r > Canary"),
    ]


def test_the_first_chunk_is_never_merged_and_small_ones_cascade() -> None:
    text = "## Tiny\nfirst\n### Also tiny\nsecond\n## Empty\n## Big\n" + CANARY
    assert chunks(text, "c.md") == [
        Chunk(
            0,
            "Tiny",
            2,
            "first\n\n## Also tiny\n\nsecond\n\n## Empty\n\n",
            "c > Tiny",
        ),
        Chunk(1, "Big", 2, CANARY, "c > Big"),
    ]


def test_merge_into_an_empty_first_chunk_has_no_leading_separator() -> None:
    assert chunks("## Empty\n## Small\nfew words", "c.md") == [
        Chunk(0, "Empty", 2, "## Small\n\nfew words", "c > Empty")
    ]


def test_merge_threshold_is_fifty_bytes() -> None:
    fifty = "x" * 50
    forty_nine = "y" * 49
    text = f"{ROLLBACK}\n## Fifty\n{fifty}\n## Forty-nine\n{forty_nine}"
    assert chunks(text, "t.md") == [
        Chunk(0, None, None, ROLLBACK, "t"),
        Chunk(1, "Fifty", 2, f"{fifty}\n\n## Forty-nine\n\n{forty_nine}", "t > Fifty"),
    ]


def test_merge_counts_utf8_bytes_not_characters() -> None:
    seventeen = "あ" * 17  # 17 characters, 51 bytes: stays
    sixteen = "い" * 16  # 16 characters, 48 bytes: merges
    text = f"## 十七\n{seventeen}\n## 十六\n{sixteen}"
    assert chunks(text, "ja/x.md") == [
        Chunk(0, "十七", 2, f"{seventeen}\n\n## 十六\n\n{sixteen}", "x > 十七"),
    ]


def test_a_merged_level_three_heading_is_written_with_two_hashes() -> None:
    text = f"## Parent\n{ROLLBACK}\n### Child\ntiny"
    assert chunks(text, "p.md") == [
        Chunk(0, "Parent", 2, f"{ROLLBACK}\n\n## Child\n\ntiny", "p > Parent"),
    ]


def test_japanese_document_with_frontmatter_sections_and_a_merge() -> None:
    text = (
        "---\ntitle: バックアップ手順\ntags: [運用, データ]\n---\n"
        "毎日の取得手順と保管期間をまとめる。対象はデータベースと設定ファイルである。\n\n"
        f"## 取得\n{BACKUP_JA}\n\n### 確認\n件数を照合する。\n\n## 保管\n{KEEP_JA}\n"
    )
    doc = parse_markdown(text, "運用/バックアップ.md")
    assert doc.tags == ("運用", "データ")
    assert doc.category == "運用"
    assert list(doc.chunks) == [
        Chunk(
            0,
            None,
            None,
            "毎日の取得手順と保管期間をまとめる。対象はデータベースと設定ファイルである。",
            "バックアップ手順",
        ),
        Chunk(
            1, "取得", 2, f"{BACKUP_JA}\n\n## 確認\n\n件数を照合する。", "バックアップ手順 > 取得"
        ),
        Chunk(2, "保管", 2, KEEP_JA, "バックアップ手順 > 保管"),
    ]


# ---- exclude_headings --------------------------------------------------------------------


def test_excluded_heading_drops_its_own_text_but_not_subsections() -> None:
    text = (
        f"## Rollback\n{ROLLBACK}\n## Internal notes\nsecret words that must not be indexed "
        f"at all, ever.\n### Canary\n{CANARY}\n## 変更履歴 (Changelog)\n{BACKUP_JA}\n"
    )
    result = chunks(text, "ops/release.md", exclude=("Internal", "変更履歴"))
    assert result == [
        Chunk(0, "Rollback", 2, ROLLBACK, "release > Rollback"),
        Chunk(1, "Canary", 3, CANARY, "release > Internal notes > Canary"),
    ]


def test_exclusion_is_case_sensitive_and_ignores_empty_patterns() -> None:
    text = f"## Internal notes\n{ROLLBACK}"
    assert chunks(text, "r.md", exclude=("internal", "")) == [
        Chunk(0, "Internal notes", 2, ROLLBACK, "r > Internal notes")
    ]


def test_exclusion_never_drops_the_lead_chunk() -> None:
    text = f"{ROLLBACK}\n## Drafts\n{CANARY}"
    assert chunks(text, "r.md", exclude=("Drafts",)) == [Chunk(0, None, None, ROLLBACK, "r")]


def test_a_small_chunk_after_an_excluded_one_merges_into_the_last_kept_chunk() -> None:
    text = f"## Keep\n{ROLLBACK}\n## Drop\n{CANARY}\n## Small\ntiny"
    assert chunks(text, "r.md", exclude=("Drop",)) == [
        Chunk(0, "Keep", 2, f"{ROLLBACK}\n\n## Small\n\ntiny", "r > Keep")
    ]


# ---- breadcrumbs -------------------------------------------------------------------------


def test_breadcrumb_ancestry_follows_heading_levels() -> None:
    text = (
        f"### Orphan\n{ROLLBACK}\n## Deploy\n{CANARY}\n### Canary\n{CANARY}\n"
        f"### Rollback\n{ROLLBACK}\n## Backup\n{ROLLBACK}\n"
    )
    assert [c.context for c in chunks(text, "ops/release-guide.md")] == [
        "release guide > Orphan",
        "release guide > Deploy",
        "release guide > Deploy > Canary",
        "release guide > Deploy > Rollback",
        "release guide > Backup",
    ]


def test_breadcrumb_skips_empty_parts_and_consecutive_duplicates() -> None:
    assert breadcrumb("Backup", ["Backup", "Daily"], "Daily") == "Backup > Daily"
    assert breadcrumb("", ["A"], "B") == "A > B"
    assert breadcrumb("A", ["B"], "A") == "A > B > A"
    assert breadcrumb("Title", [], None) == "Title"


def test_breadcrumb_is_cut_to_200_characters() -> None:
    heading = "長" * 300
    context = breadcrumb("題", [], heading)
    assert context == ("題 > " + heading)[:200]
    assert len(context) == 200


def test_empty_title_gives_heading_only_context() -> None:
    assert chunks(f"## Canary\n{CANARY}", "---.md")[0].context == "Canary"


# ---- properties --------------------------------------------------------------------------

LINE_PIECES = st.one_of(
    st.text(max_size=40),
    st.sampled_from(
        [
            "## Alpha",
            "### Beta",
            "  ## Internal notes  ",
            "### 内部メモ",
            "#### deep",
            "##",
            "## ",
            "---",
            "title: x",
            "\r",
            "",
            "\u3000## 全角空白",
            ROLLBACK,
            "あいう",
        ]
    ),
)
DOCUMENTS = st.one_of(st.text(), st.lists(LINE_PIECES, max_size=25).map("\n".join))
EXCLUDES = st.lists(st.sampled_from(["Internal", "内部", "Alpha", "", "x"]), max_size=3)


def _heading_text(line: str) -> str | None:
    trimmed = line.strip(WHITESPACE)
    for prefix in ("## ", "### "):
        if trimmed.startswith(prefix):
            return trimmed[len(prefix) :].strip(WHITESPACE)
    return None


def _kept_lines(body: str, exclude: list[str]) -> list[str]:
    """Body lines that are neither heading lines nor inside an excluded section."""
    kept: list[str] = []
    dropping = False
    for line in body.split("\n"):
        heading = _heading_text(line)
        if heading is None:
            if not dropping:
                kept.append(line)
        else:
            dropping = any(p and p in heading for p in exclude)
    return kept


def _without_merge_markers(content: str) -> list[str]:
    # A merge writes "## {heading}" on a line of its own; no kept body line can look like
    # that, because such a line would have been a heading.
    return [ln for ln in content.split("\n") if not ln.strip(WHITESPACE).startswith("## ")]


def _non_space(lines: list[str]) -> str:
    return "".join(ch for line in lines for ch in line if ch not in WHITESPACE)


@settings(max_examples=400, deadline=None)
@given(text=DOCUMENTS, exclude=EXCLUDES)
def test_chunking_loses_no_text_and_invents_none(text: str, exclude: list[str]) -> None:
    """Invariant: the non-whitespace characters of the kept body lines, in order, equal those
    of the chunk contents (concatenated in chunk order) once the merge marker lines are
    removed. So nothing outside heading lines and excluded sections is lost, reordered or
    added, and every kept line's trimmed text is a substring of some chunk."""
    doc = parse_markdown(text, "a/b/c.md", exclude)
    kept = _kept_lines(doc.body, exclude)
    chunk_lines = [ln for c in doc.chunks for ln in _without_merge_markers(c.content)]
    assert _non_space(chunk_lines) == _non_space(kept)
    for line in kept:
        piece = line.strip(WHITESPACE)
        assert any(piece in c.content for c in doc.chunks) or not piece


@settings(max_examples=300, deadline=None)
@given(text=DOCUMENTS, exclude=EXCLUDES)
def test_chunk_shape_invariants(text: str, exclude: list[str]) -> None:
    doc = parse_markdown(text, "a/c.md", exclude)
    assert [c.index for c in doc.chunks] == list(range(len(doc.chunks)))
    for c in doc.chunks:
        assert len(c.context) <= 200
        assert (c.heading is None) == (c.level is None)
        assert c.level in (None, 2, 3)
    for later in doc.chunks[1:]:
        assert later.heading is not None
        assert len(later.content.encode("utf-8")) >= 50
    assert all("\n" not in w for w in doc.warnings)


@settings(max_examples=200, deadline=None)
@given(yaml_text=st.text(max_size=80), rest=st.text(max_size=80))
def test_any_frontmatter_never_raises_and_the_body_is_what_follows(
    yaml_text: str, rest: str
) -> None:
    text = f"---{yaml_text}\n---{rest}"
    doc = parse_markdown(text, "f.md")
    # The block ends at the first "\n---" after the opening fence.
    cut = text.find("\n---", 3)
    assert doc.body == text[cut + 4 :].lstrip("\r\n")
