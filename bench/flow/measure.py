#!/usr/bin/env python3
"""Runs a command and prints one JSON line about it: wall_s, user_s and sys_s (its CPU time, from
wait4's rusage: the process and the children it waited for), max_rss_kib, exit code, and with
--rss-every S its resident set size (VmRSS, KiB) sampled every S seconds, from
/proc/PID/status. The command's stdout and stderr go to the files given. A command still
running after LIMIT seconds is killed (SIGKILL), and "killed" is true.

    measure.py --limit LIMIT [--rss-every S] STDOUT STDERR -- COMMAND ARGS...
"""
import json
import os
import subprocess
import sys
import time


def rss_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def main(argv):
    assert argv[0] == "--limit", "usage: measure.py --limit LIMIT [--rss-every S] ..."
    limit, argv = float(argv[1]), argv[2:]
    every = None
    if argv[0] == "--rss-every":
        every, argv = float(argv[1]), argv[2:]
    out, err, sep, command = argv[0], argv[1], argv[2], argv[3:]
    assert sep == "--", "usage: measure.py --limit LIMIT [--rss-every S] STDOUT STDERR -- ..."
    started = time.monotonic()
    with open(out, "wb") as stdout, open(err, "wb") as stderr:
        child = subprocess.Popen(command, stdout=stdout, stderr=stderr, stdin=subprocess.DEVNULL)
    samples = []
    status = None
    killed = False
    while status is None:
        if not killed and time.monotonic() - started > limit:
            child.kill()
            killed = True
        deadline = time.monotonic() + (every or 0.05)
        while time.monotonic() < deadline:
            pid, status, usage = os.wait4(child.pid, os.WNOHANG)
            if pid:
                break
            status = None
            time.sleep(0.05)
        if status is None and every:
            sample = rss_kib(child.pid)
            if sample is not None:
                samples.append(sample)
    print(json.dumps({
        "command": command,
        "exit": os.waitstatus_to_exitcode(status),
        "killed": killed,
        "wall_s": round(time.monotonic() - started, 3),
        "user_s": usage.ru_utime,
        "sys_s": usage.ru_stime,
        "max_rss_kib": usage.ru_maxrss,
        "rss_kib": samples,
    }))


if __name__ == "__main__":
    main(sys.argv[1:])
