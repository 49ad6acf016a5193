#!/usr/bin/env python3
"""How often a Gomocup brain chooses a stronger engine's move in the early middle game of real
games: a screen, in minutes, of a lever meant to improve the quiet moves at a given time, before
a match against that engine (docs/engine.md, "Issue 13, session 71").

usage:
  scripts/choice-suite.py build [--stretch FROM:TO] [--scores LOW:HIGH] OUT_JSON PLAYER COUNT SEED
                          NODES ANALYST_CMD... -- MATCH_JSON...
  scripts/choice-suite.py run SUITE_JSON TURN_MS OUT_JSON BRAIN_CMD...
  scripts/choice-suite.py value SUITE_JSON VALUES_JSON NODES ANALYST_CMD... -- CHOICES...
  scripts/choice-suite.py compare SUITE_JSON CHOICES_A CHOICES_B [VALUES_JSON]

`build` collects the positions where PLAYER was to move in the games of `connect5 match --json`
summaries, from the end of the opening to 24 stones after it (the stretch where session 69 found
the games decided), one of each position, draws COUNT of them (random seed SEED) and labels each
with the analyst brain's move under a node limit (`INFO max_node NODES`, so the labels do not
depend on the machine's load; two analyst processes share the work). The analyst must honour
`INFO max_node` (Rapfi does, and connect5's brain since session 79), or it thinks for the hour
the script gives it as its turn. Positions the analyst
scores as a forced result or beyond +-600 (decided already), or whose move is forced by the
patterns (a five to make or a four to block), are left out. `--stretch FROM:TO` takes the
positions FROM to TO stones after the opening instead (default 0:24), `--scores LOW:HIGH` those
whose analyst score, either sign, is LOW to HIGH (default 0:600): session 72's suite of the
positions one side already leads, where a lever's conversion and defence show. The suite is a JSON list of
{source, game, ply, rows, cols, stones, label, eval} (`stones` in the order played, black first;
`label` the analyst's move as [row, col]).

`run` gives each position to BRAIN_CMD (one process, `START` before each, `INFO timeout_turn
TURN_MS`) and writes its moves to OUT_JSON; it prints how many are the label. A timed search
answers differently from run to run: compare variants run in turns on an idle machine.

`value` has the analyst score the position after each move of the runs' files and after the
label (`INFO max_node NODES`, two processes), as the win rate of the side that played it
(the analyst's score for its opponent, negated, through a logistic of scale 200, Rapfi's); a
forced result counts as a score of +-2000. The values are kept in VALUES_JSON, keyed by position
and move, so each later run costs only the moves no run played before.

`compare` pairs two runs position by position: the positions only A or only B answered with the
label, and the difference of their agreement with its standard error (McNemar's, paired); with
VALUES_JSON, the mean difference of the win rate of their moves, with its standard error. The
second is the finer measure: a move other than the label counts by what it gives away, not as
a miss (session 71: 0.3 s against 1 s, +2.0 +- 1.8 points of agreement, +1.6 +- 0.4 points of
win rate).
"""
import json
import math
import os
import random
import sys
import threading

from gomocup_brain import (Brain, BrainError, analyst_eval, game_stones, load_games,
                           mate_against_mover, parse_move, reports_win)

STONES_AFTER_OPENING = 24
DECIDED = 600


def collect(summaries, player, stretch=(0, STONES_AFTER_OPENING)):
    """Every distinct position `stretch` stones after the opening where `player` was to move."""
    seen = set()
    found = []
    for path in summaries:
        for game in load_games(path):
            stones = game_stones(game)
            start = len(game["opening"])
            for ply in range(start + stretch[0], min(len(stones), start + stretch[1])):
                mover = game["black"] if ply % 2 == 0 else game["white"]
                if mover != player:
                    continue
                key = (game["rows"], game["cols"],
                       frozenset(stones[0:ply:2]), frozenset(stones[1:ply:2]))
                if key in seen:
                    continue
                seen.add(key)
                found.append({"source": os.path.basename(path), "game": game["game"],
                              "ply": ply, "rows": game["rows"], "cols": game["cols"],
                              "stones": [list(s) for s in stones[:ply]]})
    return found


def forced_by_patterns(position):
    """A five to make or a four to block: no choice for a lever to change."""
    rows, cols = position["rows"], position["cols"]
    stones = [tuple(s) for s in position["stones"]]
    board = {}
    for i, cell in enumerate(stones):
        board[cell] = i % 2
    mover = len(stones) % 2

    def makes_five(cell, colour):
        for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
            run = 1
            for sign in (1, -1):
                r, c = cell[0] + sign * dr, cell[1] + sign * dc
                while 0 <= r < rows and 0 <= c < cols and board.get((r, c)) == colour:
                    run += 1
                    r, c = r + sign * dr, c + sign * dc
            if run == 5:
                return True
        return False

    for r in range(rows):
        for c in range(cols):
            if (r, c) not in board and (makes_five((r, c), mover)
                                        or makes_five((r, c), 1 - mover)):
                return True
    return False


def analyse(brain, position, stones, nodes):
    """The analyst's reply and MESSAGE lines for `stones` on `position`'s board, searched to the
    node limit (the turn given is an hour, so the limit is what ends the search)."""
    reply, messages, _ = brain.think(position["rows"], position["cols"], stones, 3_600_000,
                                     max_nodes=nodes)
    return reply, messages


def with_two_analysts(analyst_cmd, step, keep):
    """Runs `step(brain)` in two threads, each with its own analyst process, until it returns
    False in both: the two cores share the analyst's work. An analyst that fails stops its
    thread while the other goes on with the rest; once both have ended, `keep()` writes what
    they found, and only then is the failure raised, in the caller's thread, so that `main`
    reports it as one line (a thread's own exception would only print a traceback) and an hour
    of the other analyst's work is not lost with it."""
    failures = []

    def worker():
        try:
            brain = Brain(analyst_cmd)
            try:
                while step(brain):
                    pass
            finally:
                brain.close()
        except BrainError as error:
            failures.append(error)

    threads = [threading.Thread(target=worker) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    keep()
    if failures:
        raise failures[0]


def key(index, move):
    return "%d:%d,%d" % (index, move[0], move[1])


def win_rate(score):
    return 1.0 / (1.0 + math.exp(-score / 200.0))


def value(suite_file, values_file, nodes, analyst_cmd, choice_files):
    with open(suite_file) as f:
        suite = json.load(f)
    values = {}
    if os.path.exists(values_file):
        with open(values_file) as f:
            values = json.load(f)
    runs = []
    for path in choice_files:
        with open(path) as f:
            runs.append(json.load(f)["moves"])
    todo = {}
    for i, position in enumerate(suite):
        for move in [position["label"]] + [moves[i] for moves in runs]:
            if key(i, move) not in values:
                todo[key(i, move)] = (i, move)
    print("%d moves to value" % len(todo), flush=True)
    lock = threading.Lock()
    jobs = iter(list(todo.values()))

    def step(brain):
        with lock:
            job = next(jobs, None)
        if job is None:
            return False
        i, move = job
        position = suite[i]
        stones = [tuple(s) for s in position["stones"]] + [tuple(move)]
        _, messages = analyse(brain, position, stones, nodes)
        if reports_win(messages):
            score = 2000
        elif mate_against_mover(messages) is not None:
            score = -2000
        else:
            score = analyst_eval(messages)
        with lock:
            # The analyst scores the position for the side to move, the mover's opponent.
            values[key(i, move)] = None if score is None else -score
        return True

    def keep():
        with open(values_file, "w") as f:
            json.dump(values, f)
        print("%d values in %s" % (len(values), values_file))

    with_two_analysts(analyst_cmd, step, keep)


def build(out, player, count, seed, nodes, analyst_cmd, summaries,
          stretch=(0, STONES_AFTER_OPENING), scores=(0, DECIDED)):
    pool = [p for p in collect(summaries, player, stretch) if not forced_by_patterns(p)]
    random.Random(seed).shuffle(pool)
    print("%d positions %d to %d stones after the opening, labelling until %d are kept"
          % (len(pool), stretch[0], stretch[1], count), flush=True)
    kept = []
    lock = threading.Lock()
    todo = iter(pool)

    def step(brain):
        with lock:
            position = None if len(kept) >= count else next(todo, None)
        if position is None:
            return False
        reply, messages = analyse(brain, position, [tuple(s) for s in position["stones"]], nodes)
        score = analyst_eval(messages)
        if score is None or not scores[0] <= abs(score) <= scores[1]:
            return True
        with lock:
            if len(kept) < count:
                kept.append(dict(position, label=parse_move(reply), eval=score))
                if len(kept) % 50 == 0:
                    print("%d labelled" % len(kept), flush=True)
        return True

    def keep():
        kept.sort(key=lambda p: (p["source"], p["game"], p["ply"]))
        with open(out, "w") as f:
            json.dump(kept, f)
        print("%d positions written to %s" % (len(kept), out))

    with_two_analysts(analyst_cmd, step, keep)


def run(suite_file, turn_ms, out, brain_cmd):
    with open(suite_file) as f:
        suite = json.load(f)
    brain = Brain(brain_cmd)
    moves = []
    agree = 0
    for i, position in enumerate(suite):
        reply, _, _ = brain.think(position["rows"], position["cols"],
                                  [tuple(s) for s in position["stones"]], turn_ms)
        move = parse_move(reply)
        moves.append(move)
        agree += move == position["label"]
        if (i + 1) % 50 == 0:
            print("%d of %d: %d the label" % (i + 1, len(suite), agree), flush=True)
    brain.close()
    with open(out, "w") as f:
        json.dump({"turn_ms": turn_ms, "brain": brain_cmd, "moves": moves}, f)
    print("the label in %d of %d (%.1f%%)" % (agree, len(suite), 100.0 * agree / len(suite)))


def compare(suite_file, file_a, file_b, values_file=None):
    with open(suite_file) as f:
        labels = [p["label"] for p in json.load(f)]
    runs = []
    for path in (file_a, file_b):
        with open(path) as f:
            runs.append(json.load(f)["moves"])
    if not all(len(moves) == len(labels) for moves in runs):
        sys.exit("the runs are not of this suite")
    a = [m == label for m, label in zip(runs[0], labels)]
    b = [m == label for m, label in zip(runs[1], labels)]
    n = len(labels)
    only_a = sum(x and not y for x, y in zip(a, b))
    only_b = sum(y and not x for x, y in zip(a, b))
    same_move = sum(x == y for x, y in zip(runs[0], runs[1]))
    diff = (only_a - only_b) / n
    error = math.sqrt(only_a + only_b - (only_a - only_b) ** 2 / n) / n
    print("A the label in %d, B in %d of %d; only A %d, only B %d; the same move in %d"
          % (sum(a), sum(b), n, only_a, only_b, same_move))
    print("A - B: %+.1f +- %.1f points of agreement (one standard error)"
          % (100 * diff, 100 * error))
    if values_file is None:
        return
    with open(values_file) as f:
        values = json.load(f)
    gains = []
    for i in range(n):
        a_value = values.get(key(i, runs[0][i]))
        b_value = values.get(key(i, runs[1][i]))
        if a_value is not None and b_value is not None:
            gains.append(win_rate(a_value) - win_rate(b_value))
    if len(gains) < 2:
        sys.exit("no values for these runs: run `value` first")
    mean = sum(gains) / len(gains)
    spread = math.sqrt(sum((g - mean) ** 2 for g in gains) / (len(gains) - 1))
    print("A - B: %+.2f +- %.2f points of the analyst's win rate of the moves (%d positions valued)"
          % (100 * mean, 100 * spread / math.sqrt(len(gains)), len(gains)))


def main():
    try:
        dispatch(sys.argv[1:])
    except BrainError as error:
        sys.exit(str(error))


def dispatch(args):
    ranges = {"--stretch": (0, STONES_AFTER_OPENING), "--scores": (0, DECIDED)}
    while len(args) >= 3 and args[0] == "build" and args[1] in ranges:
        low, _, high = args[2].partition(":")
        if not (low.isdigit() and high.isdigit()):
            sys.exit("%s wants two whole numbers joined by a colon (4:50), not %r"
                     % (args[1], args[2]))
        ranges[args[1]] = (int(low), int(high))
        args = args[:1] + args[3:]
    if len(args) >= 8 and args[0] == "build" and "--" in args:
        split = args.index("--")
        out, player, count, seed, nodes = args[1:6]
        build(out, player, int(count), int(seed), int(nodes), args[6:split], args[split + 1:],
              ranges["--stretch"], ranges["--scores"])
    elif len(args) >= 5 and args[0] == "run":
        run(args[1], int(args[2]), args[3], args[4:])
    elif len(args) >= 6 and args[0] == "value" and "--" in args:
        split = args.index("--")
        value(args[1], args[2], int(args[3]), args[4:split], args[split + 1:])
    elif len(args) in (4, 5) and args[0] == "compare":
        compare(*args[1:])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
