#!/usr/bin/env python3
"""Load test of a running `connect5 serve`: N clients at once, each playing one game of MOVES
requests (the player's move, then a random reply near it), every reply checked for legality and
timed from the request's last byte to the reply's arrival (the kernel's receive timestamp).

usage: scripts/loadtest.py CLIENTS BUDGET_MS BOARD_SIDE MOVES [PORT]

Prints the number of replies, the worst and median latency, how many were late (over the budget)
and the first illegal or unparsable replies. Clients are processes, not threads, so the client side
does not serialise on one interpreter lock and distort the latencies.
"""
import multiprocessing as mp
import os
import random
import socket
import struct
import sys
import time


# Linux's SO_TIMESTAMPNS (the socket module does not name it): the kernel stamps each received
# segment with the time it arrived, so a client process that the scheduler runs late (hundreds of
# them on two cores) does not count its own delay against the server.
SO_TIMESTAMPNS = 35


class Lines:
    """Lines from a socket, each with the kernel's arrival time of its last bytes."""

    def __init__(self, sock):
        self.sock = sock
        self.buffer = b""

    def readline(self):
        while b"\n" not in self.buffer:
            data, ancillary, _, _ = self.sock.recvmsg(65536, socket.CMSG_SPACE(16))
            if not data:
                return time.time(), ""
            self.buffer += data
            self.arrived = time.time()
            for level, kind, payload in ancillary:
                if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
                    seconds, nanoseconds = struct.unpack("qq", payload[:16])
                    self.arrived = seconds + nanoseconds / 1e9
        line, self.buffer = self.buffer.split(b"\n", 1)
        return self.arrived, line.decode(errors="replace")


def client(index, port, budget, side, moves, results, start):
    # Hundreds of client processes on the server's own cores would take the CPU from the server
    # they measure (at 256 clients on 2 cores, 5% of replies late at the server's own clock); at
    # the lowest priority they stand for clients on other machines.
    os.nice(19)
    latencies, bad = [], []
    try:
        sock = socket.create_connection(("127.0.0.1", port))
        sock.settimeout(30)
        sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        lines = Lines(sock)
        while lines.readline()[1].strip() != "READY":
            pass
        rng = random.Random(index)
        board = [["0"] * side for _ in range(side)]
        start.wait()
        for move in range(moves):
            request = f"{side} {side}\n" + "\n".join("".join(r) for r in board) + f"\n{budget}\n"
            sock.sendall(request.encode())
            sent = time.time()
            arrived, line = lines.readline()
            latencies.append((arrived - sent) * 1000)
            try:
                row, col = map(int, line.split()[:2])
                assert board[row][col] == "0"
            except (ValueError, AssertionError, IndexError):
                bad.append(line.strip())
                break
            mine = "N" if move % 2 == 0 else "B"
            board[row][col] = mine
        sock.close()
    except OSError as error:
        bad.append(repr(error))
    results.put((latencies, bad))


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    clients, budget, side, moves = (int(a) for a in sys.argv[1:5])
    port = int(sys.argv[5]) if len(sys.argv) > 5 else 1199
    results, start = mp.Queue(), mp.Barrier(clients)
    workers = [
        mp.Process(target=client, args=(i, port, budget, side, moves, results, start))
        for i in range(clients)
    ]
    for worker in workers:
        worker.start()
    latencies, bad = [], []
    for _ in workers:
        mine, wrong = results.get()
        latencies += mine
        bad += wrong
    for worker in workers:
        worker.join()
    latencies.sort()
    if not latencies:
        sys.exit(f"no reply at all: {bad[:3]}")
    late = sum(1 for x in latencies if x > budget)
    print(
        f"{len(latencies)} replies, worst {latencies[-1]:.0f} ms, median "
        f"{latencies[len(latencies) // 2]:.0f} ms, {late} over the {budget} ms budget, "
        f"bad replies: {bad[:3]}"
    )


if __name__ == "__main__":
    main()
