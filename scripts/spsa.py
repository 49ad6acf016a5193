#!/usr/bin/env python3
"""Tunes the engine's constants (`connect5 params`) by SPSA, from games it plays against itself
or, with --opponent, against another engine.

The constants are the search's and the values of the evaluation and ordering formulas (`eval_*`,
`order_*`). Each iteration moves every tuned constant at once by +c or -c at random, plays the two
versions against each other (`connect5 match`, both as Gomocup brains, balanced openings from both
sides), and steps every constant towards the side that won. Simultaneous perturbation stochastic
approximation (Spall 1992), with the gain schedules of Stockfish's and Rapfi's fishtest tuning.
With --opponent, each version plays the same openings against that engine instead, and the step
follows the difference of their scores: what the tuning then optimises is the score against
that engine, at the price of twice the games for a noisier difference.

usage: scripts/spsa.py [--binary B] [--iterations N] [--tc 0/0.04] [--board 15x15] [--pairs 2]
                       [--r-end 0.02] [--seed S] [--state FILE] [--start STATE]
                       [--opponent GOMOCUP_COMMAND] [NAME:C_END ...]

NAME:C_END tunes the constant NAME (see `connect5 params`) with a perturbation of C_END at the
last iteration (larger before); without any, the set below. The state (values, iteration, games)
is written to --state after every iteration and read back if the file exists, so a run that was
stopped goes on where it was; a line per iteration goes to stdout, and at the end the `--param`
options of the values reached. A figure of strength is a head-to-head match of those values
against the defaults at the time of a real game, never the tuner's own games (docs/engine.md,
"session 17: tuning the search").
"""
import argparse
import json
import os
import random
import subprocess
import sys
import tempfile

# Perturbation at the end of the run, by constant: about what a person would try by hand as one
# step; the constants not listed stay at their defaults unless named on the command line.
DEFAULT_TUNED = {
    "reverse_futility_margin": 15,
    "lmr_base": 0.15,
    "lmr_divisor": 0.25,
    "quiet_limit_base": 0.8,
    "quiet_limit_slope": 0.3,
    "move_count_base": 0.8,
    "move_count_exponent": 0.06,
    "singular_margin": 20,
    "aspiration_window": 8,
    "killer_first": 40,
    "killer_second": 30,
}

ALPHA = 0.602  # the learning rate's decay, as fishtest
GAMMA = 0.101  # the perturbation's decay


def read_specs(binary):
    """NAME -> (default, min, max), from `connect5 params`."""
    out = subprocess.run([binary, "params"], capture_output=True, text=True, check=True).stdout
    specs = {}
    for line in out.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        name, default, low, high = line.split()[:4]
        specs[name] = (float(default), float(low), float(high))
    return specs


def version(binary, values, name):
    """The `--player` arguments of the engine with these constants."""
    params = " ".join(f"--param {k}={v:.6g}" for k, v in sorted(values.items()))
    return [f"gomocup:{binary} gomocup --no-messages {params}", f"name={name}"]


def play(binary, plus, minus, args, seed, workdir):
    """`plus`'s wins minus its losses: against `minus`, or with --opponent, against the opponent
    less `minus`'s against it on the same openings."""
    if args.opponent:
        opponent = [f"gomocup:{args.opponent}", "name=opponent"]
        plus_result, plus_games = match(binary, version(binary, plus, "plus"), opponent, args,
                                        seed, workdir)
        minus_result, minus_games = match(binary, version(binary, minus, "minus"), opponent,
                                          args, seed, workdir)
        return plus_result - minus_result, plus_games + minus_games
    return match(binary, version(binary, plus, "plus"), version(binary, minus, "minus"), args,
                 seed, workdir)


def match(binary, first, second, args, seed, workdir):
    """Games of `first` against `second` from the openings of `seed`: `first`'s wins minus its
    losses, and the games played."""
    summary = os.path.join(workdir, "iteration.json")
    command = [binary, "match", "--player1", *first,
               "--player2", *second, "--board", args.board, "--tc", args.tc,
               "--games", str(2 * args.pairs), "--random-opening", "3", "--seed", str(seed),
               "--concurrency", "2", "--quiet", "--json", summary,
               "--logs", os.path.join(workdir, "logs")]
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    with open(summary) as f:
        result = json.load(f)
    return result["wins"] - result["losses"], result["games_played"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", default="./target/release/connect5")
    parser.add_argument("--iterations", type=int, default=800)
    parser.add_argument("--tc", default="0/0.04", help="time control of the games (--tc)")
    parser.add_argument("--board", default="15x15")
    parser.add_argument("--pairs", type=int, default=2, help="game pairs per iteration")
    parser.add_argument("--r-end", type=float, default=0.02,
                        help="learning rate at the end, a_end / c_end^2 (fishtest's r_end)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--state", default="spsa-state.json")
    parser.add_argument("--start", metavar="STATE",
                        help="start from the values a previous run's state file reached")
    parser.add_argument("--opponent", metavar="GOMOCUP_COMMAND",
                        help="play both versions against this Gomocup brain instead of each other")
    parser.add_argument("tuned", nargs="*", metavar="NAME:C_END")
    args = parser.parse_args()

    specs = read_specs(args.binary)
    tuned = dict(DEFAULT_TUNED)
    if args.tuned:
        tuned = {}
        for item in args.tuned:
            name, _, c_end = item.partition(":")
            tuned[name] = float(c_end)
    unknown = [name for name in tuned if name not in specs]
    if unknown:
        sys.exit(f"unknown constants {unknown}; `{args.binary} params` lists them")

    state = {"iteration": 0, "games": 0, "values": {n: specs[n][0] for n in tuned},
             "tuned": tuned, "history": []}
    if args.start:
        with open(args.start) as f:
            reached = json.load(f)["values"]
        state["values"].update({n: v for n, v in reached.items() if n in tuned})
    if os.path.exists(args.state):
        if args.start:
            print(f"resuming {args.state}: --start {args.start} does not apply", file=sys.stderr)
        with open(args.state) as f:
            state = json.load(f)
        tuned = state["tuned"]
    n = args.iterations
    big_a = 0.1 * n
    rng = random.Random(args.seed * 1_000_003 + state["iteration"])
    with tempfile.TemporaryDirectory(prefix="spsa-") as workdir:
        while state["iteration"] < n:
            k = state["iteration"] + 1
            values = state["values"]
            plus, minus, step, flips = {}, {}, {}, {}
            for name, c_end in tuned.items():
                _, low, high = specs[name]
                c_k = c_end * n ** GAMMA / k ** GAMMA
                a_k = args.r_end * c_end ** 2 * (big_a + n) ** ALPHA / (big_a + k) ** ALPHA
                flip = rng.choice((-1, 1))
                plus[name] = min(high, max(low, values[name] + c_k * flip))
                minus[name] = min(high, max(low, values[name] - c_k * flip))
                step[name], flips[name] = a_k / c_k, flip
            result, games = play(args.binary, plus, minus, args, args.seed * 100_000 + k, workdir)
            for name in tuned:
                _, low, high = specs[name]
                moved = values[name] + step[name] * result * flips[name]
                values[name] = min(high, max(low, moved))
            state["iteration"], state["games"] = k, state["games"] + games
            state["history"].append(result)
            with open(args.state + ".tmp", "w") as f:
                json.dump(state, f, indent=1)
            os.replace(args.state + ".tmp", args.state)
            shown = " ".join(f"{name}={values[name]:.4g}" for name in tuned)
            print(f"{k}/{n} games {state['games']} result {result:+d} {shown}", flush=True)
    print(" ".join(f"--param {name}={state['values'][name]:.4g}" for name in tuned))


if __name__ == "__main__":
    main()
