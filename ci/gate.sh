#!/usr/bin/env bash
# groove's CI gate: index the knowledge base, run the eval-report notebook with
# fail_on_regression against the committed accepted baseline (the baseline file
# <golden stem>.baseline.json beside the golden file, written by `groove baseline accept
# --file` and reviewed like any other change), and exit with its code (0 passed,
# 1 regression, 2 bad input, 3 the notebook failed, 4 the gate could not be applied: no
# baseline file and no history, or a file of another configuration). require_baseline is
# on: a gate that compared nothing fails. The report lands in OUT: eval-report.html,
# eval-report.ipynb, result.json, summary.md and junit.xml (one test case per golden
# query, for the CI's test report); when $GITHUB_STEP_SUMMARY is set the Markdown summary
# is appended to it.
#
#   ci/gate.sh KB [OUT] [-p NAME VALUE]...
#
# No cache is needed to gate: the file is in the repository. A history kept between runs
# (KB/.groove-eval-history.json, in a cache) adds the comparison with the previous run and
# the trend plot. After a regression the script writes OUT/proposed.baseline.json (this
# run as the accepted baseline) and prints how to accept it: commit it over the baseline
# file when the drop is intended, and the review of that pull request is the decision.
# Environment: GROOVE (the groove command, default: groove), PYTHON (default: python3),
# GROOVE_BASELINE_FILE (another baseline file), GROOVE_BASELINE (also compare with the
# run pinned under this name in the history).
set -euo pipefail

kb="${1:?usage: ci/gate.sh KB [OUT] [-p NAME VALUE]...}"
shift
out="groove-report"
if [ $# -gt 0 ] && [ "$1" != "-p" ]; then
  out="$1"
  shift
fi
groove="${GROOVE:-groove}"
python="${PYTHON:-python3}"

"$groove" index --kb-path "$kb"

gate=(-p fail_on_regression true -p require_baseline true -p junit "$out/junit.xml")
if [ -n "${GROOVE_BASELINE_FILE:-}" ]; then
  gate+=(-p baseline_file "$GROOVE_BASELINE_FILE")
fi
if [ -n "${GROOVE_BASELINE:-}" ]; then
  gate+=(-p baseline "$GROOVE_BASELINE")
fi
status=0
"$groove" notebook run eval-report --kb-path "$kb" "${gate[@]}" --out "$out" "$@" || status=$?

accept="groove baseline accept --kb-path $kb --file"
if [ -n "${GROOVE_BASELINE_FILE:-}" ]; then
  accept="$accept $GROOVE_BASELINE_FILE"
fi
advice=""
if [ "$status" -eq 1 ]; then
  # The regressed run is in the history now: propose it as the accepted baseline.
  "$groove" baseline accept --kb-path "$kb" --file "$out/proposed.baseline.json" >/dev/null
  advice="If this drop is intended, accept it in review: commit $out/proposed.baseline.json over the baseline file (default: <golden stem>.baseline.json beside the golden file), or run \`groove eval --kb-path $kb\` and \`$accept\` locally and commit the file."
elif [ "$status" -eq 4 ]; then
  advice="No accepted baseline to gate against: run \`groove eval --kb-path $kb\` then \`$accept\`, and commit the file it writes."
fi
if [ -n "$advice" ]; then
  echo "ci/gate.sh: $advice" >&2
fi

if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
  if [ -f "$out/summary.md" ]; then
    cat "$out/summary.md" >> "$GITHUB_STEP_SUMMARY"
    if [ -n "$advice" ]; then
      printf '\n%s\n' "$advice" >> "$GITHUB_STEP_SUMMARY"
    fi
  elif [ -f "$out/result.json" ]; then
    # No report: say why (the runner wrote the error into result.json).
    "$python" - "$out/result.json" >> "$GITHUB_STEP_SUMMARY" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1], encoding="utf-8"))
print(f"## groove eval\n\n**The gate could not run** (exit {doc['exit_code']}): {doc.get('error')}")
if doc.get("hint"):
    print(f"\nhint: {doc['hint']}")
PY
  fi
fi
exit "$status"
