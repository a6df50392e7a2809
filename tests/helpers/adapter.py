"""A command retriever for the tests: answers golden queries from a JSON-lines run file.

    python adapter.py RUN.jsonl [--fault KIND --at N]

Each request line gets the hits the run file lists for its id. ``--fault`` misbehaves on
the N-th request (1-based): ``exit`` (exits with code 3), ``hang`` (never answers),
``malformed`` (a line that is not JSON), ``no-path`` (a hit without path), ``wrong-id``
(answers an id it was not asked).
"""

from __future__ import annotations

import argparse
import json
import sys
import time


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("run")
    parser.add_argument("--fault", default=None)
    parser.add_argument("--at", type=int, default=1)
    args = parser.parse_args()
    with open(args.run, encoding="utf-8") as handle:
        hits = {str(a["id"]): a["hits"] for a in map(json.loads, handle) if a}
    for n, line in enumerate(sys.stdin, start=1):
        request = json.loads(line)
        qid = request["id"]
        answer = {"id": qid, "hits": hits.get(qid, [])[: request["limit"]]}
        if n == args.at and args.fault == "exit":
            print("adapter: giving up", file=sys.stderr)
            sys.exit(3)
        if n == args.at and args.fault == "hang":
            time.sleep(60)
        if n == args.at and args.fault == "malformed":
            print("{not json", flush=True)
            continue
        if n == args.at and args.fault == "no-path":
            answer["hits"] = [{"heading": "x", "score": 1.0}]
        if n == args.at and args.fault == "wrong-id":
            answer["id"] = "someone-else"
        print(json.dumps(answer), flush=True)


if __name__ == "__main__":
    main()
