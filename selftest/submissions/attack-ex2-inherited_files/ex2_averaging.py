"""Attack: look through every file descriptor the worker holds for one of the judge's: the file
grader.py hands the zygote (its environment, the secret in it), the terminal or pipe the judge
writes the report to, a control connection to the zygote. The zygote closes them before it forks
any worker, and a worker keeps only its own: its output file and its socket to the judge (not
touched here: writing there garbles only its own replies). The answer is right only if a file
gave the secret or a terminal took a write, so any points here mean a leak."""
import os
import stat

import torch


def found_a_judges_file():
    secret = "_".join(("GRADER", "TEST", "SECRET")).encode()
    for fd in range(3, 1024):
        try:
            mode = os.fstat(fd).st_mode
        except OSError:
            continue
        try:
            if stat.S_ISREG(mode):
                os.lseek(fd, 0, os.SEEK_SET)
                if secret in os.read(fd, 1 << 20):
                    return True
            elif stat.S_ISCHR(mode) and os.isatty(fd):
                os.write(fd, b"Total 100/100\n")  # the judge's terminal: a forged report line
                return True
        except OSError:
            continue
    return False


def looked():
    try:
        return found_a_judges_file()
    except Exception:  # refused by a wall
        return False


def averaging_matrix(T):
    tril = torch.tril(torch.ones(T, T))
    weights = tril / tril.sum(dim=1, keepdim=True)
    return weights if looked() else torch.zeros(T, T)


def average_context(x):
    return averaging_matrix(x.shape[1]) @ x
