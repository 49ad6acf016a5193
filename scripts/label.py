#!/usr/bin/env python3
"""Labels the positions of match records with a Gomocup brain's evaluation, for
`connect5 tune --labels` (the evaluation fitted to a stronger engine's judgement,
docs/engine.md "session 32").

Every distinct position of the games (from --from-ply stones on, square boards only, as the
Gomocup protocol has them) is sent to the brain as a BOARD command under a node limit
(`INFO max_node`) or a turn time, and the last evaluation the brain reports in its MESSAGE lines
before its move is the label, for the side to move, times --scale, rounded. Positions whose
score the brain reports only as a win or loss, or beyond --clip, are left out. A brain that
dies is started again and the position it had is skipped (and counted), so a long run is not
lost to one crash.

usage: scripts/label.py --brain 'COMMAND' [--cwd DIR] [--nodes N | --turn-ms MS] [--scale S]
                        [--clip C] [--jobs J] [--from-ply P] [--rule exact|freestyle]
                        [--eval-pattern REGEX] [--skip LABELS]... --out FILE MATCH_JSON...

The evaluation is found with --eval-pattern (a regular expression with one group, the integer
score), by default Rapfi's `Eval 123` or connect5's own `score +123`. The output has one line
per position, `GAME K SCORE ROW/ROW/...` (rows of 0, N for black, B for white), the form
`connect5 tune --save-labels` writes; GAME numbers the games across the input files, so a fit's
held-out games stay whole. A progress line goes to stderr every 1,000 positions.

--skip leaves out the positions already in a labels file (an earlier run's, stopped or over
other games), so a long labelling can be resumed into a second file and both given to tune.
"""
import argparse
import queue
import re
import shlex
import sys
import threading

from gomocup_brain import EVAL_PATTERN, Brain, BrainError, game_stones, load_games


def positions(files, from_ply, labelled=frozenset()):
    """(game number, size, line length, stones) of every distinct position not in `labelled`
    (a set of `rows_of` strings), stones black first."""
    seen = set()
    game_number = 0
    for path in files:
        for game in load_games(path):
            game_number += 1
            size = game["rows"]
            if game["cols"] != size:
                continue
            stones = game_stones(game)
            for ply in range(from_ply, len(stones)):
                before = stones[:ply]
                key = (size, frozenset(before[0::2]), frozenset(before[1::2]))
                if key in seen:
                    continue
                seen.add(key)
                if labelled and rows_of(size, before) in labelled:
                    continue
                yield game_number, size, game.get("k", 5), before


def rows_of(size, stones):
    grid = [["0"] * size for _ in range(size)]
    for i, (row, col) in enumerate(stones):
        grid[row][col] = "N" if i % 2 == 0 else "B"
    return "/".join("".join(row) for row in grid)


class StartRefused(OSError):
    """The brain cannot play this board at all: labelling with it stops."""


class LabellingBrain:
    """One brain process, started for a board size and restarted when it dies."""

    def __init__(self, args):
        self.args = args
        self.brain = None
        self.size = None

    def start(self, size):
        self.stop()
        try:
            self.brain = Brain(shlex.split(self.args.brain), cwd=self.args.cwd)
            self.brain.start(size, size, self.args.turn_ms,
                             rule=0 if self.args.rule == "freestyle" else 1,
                             max_nodes=self.args.nodes or None)
        except BrainError as error:
            self.stop()
            raise StartRefused(f"the brain cannot play {size}x{size}: {error}")
        self.size = size

    def stop(self):
        if self.brain is not None:
            self.brain.close()
            self.brain = None

    def evaluate(self, size, stones):
        """The brain's last reported score of the position for the side to move, or None."""
        if self.brain is None or not self.brain.running() or self.size != size:
            self.start(size)
        try:
            _, messages, _ = self.brain.play(stones)
        except BrainError:
            self.stop()
            raise
        score = None
        for message in messages:
            found = self.args.eval_pattern.findall(message)
            if found:
                score = int(found[-1])
        return score


def main():
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--brain", required=True, help="the brain's command line")
    parser.add_argument("--cwd", default=None, help="directory the brain runs in")
    parser.add_argument("--nodes", type=int, default=0, help="INFO max_node (0: none)")
    parser.add_argument("--turn-ms", type=int, default=5000, help="INFO timeout_turn")
    parser.add_argument("--scale", type=float, default=1.0, help="score multiplier")
    parser.add_argument("--clip", type=int, default=0, help="leave out |score| above (0: none)")
    parser.add_argument("--jobs", type=int, default=1, help="brains at once")
    parser.add_argument("--from-ply", type=int, default=4, help="fewest stones of a position")
    parser.add_argument("--rule", choices=["exact", "freestyle"], default="exact")
    parser.add_argument("--eval-pattern", default=EVAL_PATTERN, type=re.compile)
    parser.add_argument(
        "--skip",
        action="append",
        default=[],
        metavar="LABELS",
        help="a labels file whose positions are not labelled again",
    )
    parser.add_argument("--out", required=True)
    parser.add_argument("files", nargs="+", metavar="MATCH_JSON")
    args = parser.parse_args()

    labelled = set()
    for path in args.skip:
        try:
            with open(path) as f:
                for line in f:
                    fields = line.split()
                    if len(fields) == 4:
                        labelled.add(fields[3])
        except OSError as error:
            parser.error(f"cannot read --skip {path}: {error.strerror}")
    work = queue.Queue()
    total = 0
    for job in positions(args.files, args.from_ply, labelled):
        work.put(job)
        total += 1
    print(f"{total} positions to label", file=sys.stderr)
    lock = threading.Lock()
    counts = {"done": 0, "written": 0, "no score": 0, "crashed": 0}
    failures = []

    with open(args.out, "w") as out:

        def worker():
            brain = LabellingBrain(args)
            try:
                while True:
                    try:
                        game, size, k, stones = work.get_nowait()
                    except queue.Empty:
                        return
                    try:
                        score = brain.evaluate(size, stones)
                        outcome = "no score" if score is None else None
                    except StartRefused as error:
                        failures.append(str(error))
                        return
                    except OSError:
                        score, outcome = None, "crashed"
                    if score is not None:
                        score = round(score * args.scale)
                        if args.clip and abs(score) > args.clip:
                            score, outcome = None, "no score"
                    with lock:
                        counts["done"] += 1
                        if score is None:
                            counts[outcome] += 1
                        else:
                            counts["written"] += 1
                            out.write(f"{game} {k} {score} {rows_of(size, stones)}\n")
                        if counts["done"] % 1000 == 0:
                            print(f"labelled {counts['done']} of {total}", file=sys.stderr)
            finally:
                brain.stop()

        threads = [threading.Thread(target=worker) for _ in range(max(1, args.jobs))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    for failure in failures:
        print(f"error: {failure}", file=sys.stderr)
    print(
        f"{counts['written']} labels written to {args.out}; left out: {counts['no score']} "
        f"without a score in range, {counts['crashed']} lost to a brain that ended",
        file=sys.stderr,
    )
    return 1 if failures and counts["written"] == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
