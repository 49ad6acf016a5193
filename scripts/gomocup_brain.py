"""The manager's side of the Gomocup protocol, for the scripts that give recorded positions to a
brain (win-suite.py, choice-suite.py, first-forced.py, brain-depth.py, brain-speed.py,
label.py), the reading of the scores in a brain's MESSAGE lines, and the reading of
`connect5 match --json` summaries they share.

Positions are lists of (row, col) in the order played, black first. A brain is told a position
with `BOARD`, its stones listed alternating with the side to move's opponent last: Rapfi takes
the side to move from that order, and the third field says whose stone each is (1 the side to
move's, 2 the other's).
"""
import gzip
import json
import re
import subprocess
import sys
import time


class BrainError(OSError):
    """The brain ended, or refused what it was sent; the message says which and where."""


def load_games(summary):
    """The games of a `connect5 match --json` summary, gzipped (`.gz`) or not; a file that is
    not one ends the script with a one-line error."""
    opener = gzip.open if summary.endswith(".gz") else open
    try:
        with opener(summary, "rt") as f:
            return json.load(f)["games"]
    except (OSError, ValueError, KeyError, TypeError) as error:
        sys.exit("%s is not a readable `connect5 match --json` summary: %s" % (summary, error))


def game_stones(game):
    """Every stone of a recorded game, the opening's first, as (row, col) in the order played."""
    return [tuple(m) for m in game["opening"]] + [(m["row"], m["col"]) for m in game["moves"]]


def board_listing(stones):
    """The `BOARD` command and its stone lines for the position of `stones`, without the
    `DONE` that starts the search."""
    n = len(stones)
    return "\n".join(["BOARD"] + ["%d,%d,%d" % (col, row, 1 if i % 2 == n % 2 else 2)
                                  for i, (row, col) in enumerate(stones)])


class Brain:
    """One brain process, driven as a Gomocup manager drives it."""

    def __init__(self, command, cwd=None):
        try:
            self.process = subprocess.Popen(command, cwd=cwd, stdin=subprocess.PIPE,
                                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                            text=True, bufsize=1)
        except OSError as error:
            raise BrainError("cannot start the brain %s: %s" % (" ".join(command), error))

    def running(self):
        return self.process.poll() is None

    def send(self, text):
        try:
            self.process.stdin.write(text + "\n")
            self.process.stdin.flush()
        except OSError:
            raise BrainError("the brain closed its input")

    def answer(self):
        """The brain's next line that is not a MESSAGE, and the MESSAGE lines before it."""
        messages = []
        while True:
            line = self.process.stdout.readline()
            if not line:
                raise BrainError("the brain closed its output")
            line = line.strip()
            if line.startswith("MESSAGE"):
                messages.append(line)
            elif line:
                return line, messages

    def start(self, rows, cols, turn_ms, rule=1, max_nodes=None):
        """A new game on a `rows` x `cols` board: exact five (rule 1) unless told otherwise,
        no match clock, `turn_ms` a move and, if given, a node limit."""
        command = "START %d" % rows if rows == cols else "RECTSTART %d,%d" % (cols, rows)
        self.send(command)
        reply, _ = self.answer()
        if reply != "OK":
            raise BrainError("%s: %s" % (command, reply))
        infos = ["INFO rule %d" % rule, "INFO timeout_match 0", "INFO timeout_turn %d" % turn_ms]
        if max_nodes is not None:
            infos.append("INFO max_node %d" % max_nodes)
        self.send("\n".join(infos))

    def play(self, stones):
        """The brain's move in the position of `stones`, its MESSAGE lines and the time it took
        in milliseconds."""
        self.send(board_listing(stones))
        started = time.monotonic()
        self.send("DONE")
        reply, messages = self.answer()
        if reply.startswith("ERROR"):
            raise BrainError("BOARD of %d stones: %s" % (len(stones), reply))
        return reply, messages, (time.monotonic() - started) * 1000

    def think(self, rows, cols, stones, turn_ms, max_nodes=None):
        """`play` after a `START`, as the first position of a new game."""
        self.start(rows, cols, turn_ms, max_nodes=max_nodes)
        return self.play(stones)

    def close(self):
        try:
            self.send("END")
            self.process.wait(timeout=10)
        except (BrainError, subprocess.TimeoutExpired):
            self.process.kill()
            self.process.wait()


def parse_move(reply):
    """A brain's `x,y` reply as [row, col]."""
    col, row = reply.split(",")
    return [int(row), int(col)]


# A plain evaluation in a brain's MESSAGE lines: Rapfi's `Eval 54`, connect5's `score -91`. The
# forced results (`Eval +M25`, `score win in 25 plies`) do not match it.
EVAL_PATTERN = r"(?:\bEval|\bscore) \+?(-?\d+)\b"

# Any score, forced results included: Rapfi's `Eval` (`+M25`, `-M25`, `54`), connect5's `score`
# (`win in 25 plies`, `loss in 25 plies`, `-91`).
SCORE = re.compile(r"Eval ([+-]?M?\d+)|score (win in \d+ plies|loss in \d+ plies|[+-]?\d+)")


def analyst_score(messages):
    """The last score the brain printed for the side to move, as printed (see `SCORE`)."""
    found = [rapfi or connect5 for rapfi, connect5 in SCORE.findall(" ".join(messages))]
    return found[-1] if found else None


def forced_sign(score):
    """+1 when `score` (as `analyst_score` reads it) reports a forced win for the side to move,
    -1 a forced loss, else 0."""
    if score is None:
        return 0
    if score.startswith("+M") or score.startswith("win in"):
        return 1
    if score.startswith("-M") or score.startswith("loss in"):
        return -1
    return 0


def mate_against_mover(messages):
    """The length of the forced loss the brain reports for the side to move, if any."""
    score = analyst_score(messages)
    if forced_sign(score) >= 0:
        return None
    return int(re.search(r"\d+", score).group())


def reports_win(messages):
    """Whether the brain's MESSAGE lines report a forced win for the side to move."""
    return forced_sign(analyst_score(messages)) > 0


def analyst_eval(messages):
    """The brain's last plain evaluation for the side to move; None when it reports a forced
    result or none."""
    if forced_sign(analyst_score(messages)) != 0:
        return None
    found = re.findall(EVAL_PATTERN, " ".join(messages))
    return int(found[-1]) if found else None
