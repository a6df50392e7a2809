"""A command retriever for the tests that answers with legs: it echoes stored answers.

    python legs_adapter.py ANSWERS.jsonl [--fault bad-leg --at N]

Each line of ANSWERS.jsonl is a whole answer (``id``, ``hits``, ``legs``); a request gets
its id's answer, ``hits`` cut to the requested limit and ``legs`` as stored. ``--fault
bad-leg`` sends, on the N-th request, a vector leg whose hit has no score.
"""

from __future__ import annotations

import argparse
import json
import sys


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("answers")
    parser.add_argument("--fault", default=None)
    parser.add_argument("--at", type=int, default=1)
    args = parser.parse_args()
    with open(args.answers, encoding="utf-8") as handle:
        answers = {str(a["id"]): a for a in map(json.loads, handle) if a}
    for n, line in enumerate(sys.stdin, start=1):
        request = json.loads(line)
        stored = answers.get(request["id"], {"hits": [], "legs": {"lexical": [], "vector": []}})
        answer = {**stored, "id": request["id"], "hits": stored["hits"][: request["limit"]]}
        if n == args.at and args.fault == "bad-leg":
            answer["legs"] = {"lexical": [], "vector": [{"path": "a.md"}]}
        print(json.dumps(answer), flush=True)


if __name__ == "__main__":
    main()
