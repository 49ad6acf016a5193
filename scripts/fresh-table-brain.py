#!/usr/bin/env python3
"""A Gomocup brain whose transposition table is cleared after every move it plays, so that each
of its searches starts empty, as in the suites of scripts/choice-suite.py and win-suite.py
(docs/engine.md, "Issue 13, session 72": what Rapfi's table kept from move to move is worth).

usage: scripts/fresh-table-brain.py BRAIN_CMD...

Forwards the manager's lines to BRAIN_CMD and its lines back; after each move the brain prints,
and before that move reaches the manager, it sends the brain `YXHASHCLEAR` (a Yixin-protocol
command that Rapfi and connect5 understand), so the clearing happens while the opponent thinks,
not on the brain's clock. Rapfi's "MESSAGE Transposition table cleared." is not passed on.
Example, as a `connect5 match` player:
`gomocup:scripts/fresh-table-brain.py ../shared/opponents/pbrain-rapfi`.
"""
import re
import subprocess
import sys
import threading

MOVE = re.compile(r"\d+,\d+\s*")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    brain = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             text=True, bufsize=1)
    lock = threading.Lock()

    def to_brain(line):
        with lock:
            try:
                brain.stdin.write(line)
                brain.stdin.flush()
            except (ValueError, OSError):
                pass  # the brain has ended: the manager learns it from its closed output

    def from_brain():
        for line in brain.stdout:
            if line.startswith("MESSAGE Transposition table cleared"):
                continue
            if MOVE.fullmatch(line):
                to_brain("YXHASHCLEAR\n")
            sys.stdout.write(line)
            sys.stdout.flush()

    replies = threading.Thread(target=from_brain, daemon=True)
    replies.start()
    for line in sys.stdin:
        to_brain(line)
        if line.strip().upper() == "END":
            break
    with lock:
        try:
            brain.stdin.close()
        except OSError:
            pass
    brain.wait()
    replies.join(timeout=2)


if __name__ == "__main__":
    main()
