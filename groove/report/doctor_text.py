"""``groove golden doctor``'s report: the proposals, the golden set's checks, the rewrite."""

from __future__ import annotations

from groove.golden.proposals import CERTAIN, LIKELY, DoctorReport, Proposal

#: how a face names the two switches (the CLI passes its flags: groove/cli/words.py)
SWITCHES = ("apply=True", "accept_likely=True")


def render(
    report: DoctorReport,
    *,
    apply: bool = False,
    accept_likely: bool = False,
    switches: tuple[str, str] = SWITCHES,
) -> str:
    lines = [_summary(report)]
    if report.memory is None and report.proposals:
        lines.append(
            "  (the eval history holds no sketch of the expected files: run groove eval before "
            "the next reorganisation to get certain proposals)"
        )
    for p in report.proposals:
        lines += _proposal(p)
    if report.checks:
        lines.append(f"{len(report.checks)} problem(s) of the golden set itself:")
        lines += [f"  {c.describe()}" for c in report.checks]
    lines += _applied(report, apply, accept_likely, switches)
    return "\n".join(lines) + "\n"


def _summary(report: DoctorReport) -> str:
    broken = len(report.proposals)
    if not broken:
        return f"{report.golden_path}: all {report.entries} expected entries are in the index"
    certain, likely = len(report.certain), len(report.likely)
    none = broken - certain - likely
    return (
        f"{report.golden_path}: {broken} of {report.entries} expected entries are not in the "
        f"index ({certain} certain, {likely} likely, {none} without a candidate)"
    )


def _proposal(p: Proposal) -> list[str]:
    where = f"line {p.line}" if p.line is not None else "line ?"
    head = f"  {p.query_id} ({where}): {p.change}"
    if p.target is None:
        old = p.change.removesuffix(" -> -")
        return [f"  {p.query_id} ({where}): {old}: no candidate", f"      {p.kind}: {p.evidence}"]
    return [head, f"      {p.kind}, {p.confidence}: {p.evidence}"]


def _applied(
    report: DoctorReport, apply: bool, accept_likely: bool, switches: tuple[str, str]
) -> list[str]:
    apply_switch, likely_switch = switches
    if not report.proposals:
        return []
    if not apply:
        certain = len(report.certain)
        hint = []
        if certain:
            hint.append(f"{apply_switch} rewrites the {certain} certain one(s)")
        if report.likely:
            likely = len(report.likely)
            hint.append(f"{apply_switch} {likely_switch} the {likely} likely one(s) too")
        return [f"Nothing changed ({'; '.join(hint)})."] if hint else []
    if not report.written:
        return [
            "Nothing changed: no proposal is "
            + ("certain or likely." if accept_likely else "certain.")
        ]
    count = len(report.applied)
    out = [f"Rewrote {count} entr{'y' if count == 1 else 'ies'} in {report.golden_path}:"]
    out += [f"  {p.query_id}: {p.change}" for p in report.applied]
    left = [p for p in report.proposals if p not in report.applied]
    kept = [p for p in left if p.confidence in (CERTAIN, LIKELY)]
    if kept:
        out.append(f"Left as they were: {len(kept)} (pass {likely_switch} to take the likely ones)")
    return out
