#!/usr/bin/env bash
# groove's CI gate: index the knowledge base, run the eval-report notebook with
# fail_on_regression against the baseline pinned as "main" (require_baseline: a gate
# that cannot be applied fails), and exit with its code (0 passed, 1 regression, 2 bad
# input, 3 the notebook failed, 4 the gate could not be applied: no pinned baseline, or
# one of another configuration). The report lands in OUT: eval-report.html,
# eval-report.ipynb, result.json and summary.md. When $GITHUB_STEP_SUMMARY is set, the
# Markdown summary (aggregate table with arrows, misses, findings) is appended to it.
#
#   ci/gate.sh KB [OUT] [-p NAME VALUE]...
#
# A later -p wins: `-p require_baseline false` runs once without a baseline (the first
# run), after which `groove baseline set main --kb-path KB` pins it (see ci/groove-eval.yml).
# The eval history (KB/.groove-eval-history.json) holds the runs and the pin: keep it
# between CI runs (cache or artifact).
# Environment: GROOVE (the groove command, default: groove), PYTHON (default: python3),
# GROOVE_BASELINE (the pinned name, default: main).
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

status=0
"$groove" notebook run eval-report --kb-path "$kb" -p fail_on_regression true \
  -p baseline "${GROOVE_BASELINE:-main}" -p require_baseline true \
  --out "$out" "$@" || status=$?

if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
  if [ -f "$out/summary.md" ]; then
    cat "$out/summary.md" >> "$GITHUB_STEP_SUMMARY"
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
