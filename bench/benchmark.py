#!/usr/bin/env python3
"""How long grading takes, as a ratio to `python -c "import torch"` timed in the same run.

    python bench/benchmark.py              medians of 5 runs each, interleaved
    python bench/benchmark.py --runs 9 --max-ratio 2.0
    python bench/benchmark.py --batch 30   also: 30 submissions by --batch, against one run
    python bench/benchmark.py --under-load 8   grade the solutions 5 times while 8 processes
                                           keep every core busy: each must score 100

`import torch` is the floor of any grading run on this machine (~2 s here); the ratio makes the
figure comparable across machines and loads. Exit status 1 when --max-ratio is given and exceeded.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = {
    "import torch": [sys.executable, "-c", "import torch"],
    "grader.py --solutions": [sys.executable, str(ROOT / "grader.py"), "--solutions"],
    # the portable backend (macOS, Windows), forced here; its limit is 2.5 × import torch
    "portable --solutions": ["GRADER_BACKEND=portable", sys.executable, str(ROOT / "grader.py"),
                             "--solutions"],
}


def wall_time(command):
    env = dict(os.environ)
    while "=" in command[0]:  # leading NAME=value words set the environment, as in a shell
        name, value = command[0].split("=", 1)
        env[name], command = value, command[1:]
    started = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          env=env)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)} failed (exit {done.returncode}):\n{done.stderr.decode()}")
    return seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--max-ratio", type=float, default=None)
    parser.add_argument("--batch", type=int, default=0, metavar="N",
                        help="also time N copies of the solutions graded by --batch")
    parser.add_argument("--under-load", type=int, default=0, metavar="N",
                        help="instead: grade the solutions --runs times beside N busy processes")
    args = parser.parse_args()
    if args.under_load:
        return under_load(args.under_load, args.runs)
    folder = None
    if args.batch:
        folder = Path(tempfile.mkdtemp(prefix="grader-bench-"))
        for i in range(args.batch):
            shutil.copytree(ROOT / "solutions", folder / f"submission-{i:03d}")
        COMMANDS[f"--batch of {args.batch}"] = [
            sys.executable, str(ROOT / "grader.py"), "--batch", str(folder),
            "--csv", str(folder / "grades.csv")]
    for command in COMMANDS.values():  # warm the disk cache; not counted
        wall_time(command)
    times = {name: [] for name in COMMANDS}
    for _ in range(args.runs):
        for name, command in COMMANDS.items():  # interleaved, so both see the same load
            times[name].append(wall_time(command))
    medians = {name: statistics.median(ts) for name, ts in times.items()}
    for name, ts in times.items():
        print(f"{name:<24} median {medians[name]:.2f} s   runs: "
              + " ".join(f"{t:.2f}" for t in ts))
    ratio = medians["grader.py --solutions"] / medians["import torch"]
    print(f"ratio grader / import torch: {ratio:.2f}")
    portable = medians["portable --solutions"] / medians["import torch"]
    print(f"ratio portable backend / import torch: {portable:.2f} (limit 2.5)")
    if folder is not None:
        batch = medians[f"--batch of {args.batch}"] / medians["grader.py --solutions"]
        print(f"ratio --batch of {args.batch} / one run: {batch:.2f}")
        shutil.rmtree(folder)
    if args.max_ratio is not None and ratio > args.max_ratio:
        print(f"over the limit of {args.max_ratio}")
        return 1
    if portable > 2.5:
        print("the portable backend is over its limit of 2.5")
        return 1
    return 0


def under_load(busy, runs):
    """Time limits count the worker's own time: a right answer never loses a point because the
    machine is busy. Exit 1 unless every run scores 100."""
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(busy)]
    failures = 0
    try:
        for run in range(runs):
            started = time.perf_counter()
            done = subprocess.run([sys.executable, str(ROOT / "grader.py"), "--solutions",
                                   "--lang", "en"], cwd=ROOT, capture_output=True, text=True,
                                  timeout=600)
            total = next((line.strip() for line in done.stdout.splitlines()
                          if line.strip().startswith("Total")), "no total")
            print(f"run {run + 1}: exit {done.returncode}, {total.split(' · ')[0]}, "
                  f"{time.perf_counter() - started:.1f} s beside {busy} busy processes")
            failures += done.returncode != 0
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()
    print(f"{runs - failures} of {runs} runs scored 100")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
