"""The worker side: the only place where a submission's code runs. It holds no test logic.

The judge starts one *zygote* per grading run: a fresh interpreter, started with a minimal
environment, that imports torch and waits. For each exercise the judge asks it to fork a *worker*.
The worker leaves the zygote's session, sends its output to a private unlinked file, puts up its
walls (grading/walls/kernel.py), imports the one exercise module of the submission and then does what
the judge asks, one request at a time, over a socket that goes straight to the judge. The requests
are primitive (see Executor): construct an object, set a named tensor, call a function or method on
the judge's tensors, a vector-Jacobian product, the record of one call's operations. Everything the judge
concludes, it concludes from what came back.

The rooms: zygote.py (the zygote), handover.py (the judge's birth out of it, for a handed-over
run), serve.py (a worker), portable.py (the portable backend's worker), executor.py (the
requests). This folder imports nothing of tests/, the judge side (grading/judge, checks,
diagnosis) or the solutions. This file is only the script that starts one of them:
run by grading.backends.zygote: python -I -S grading/worker/main.py ROOT CONTROL_FD[,FD…]
or by grading.backends.portable:            python -I -S grading/worker/main.py --portable ADDRESS ROOT [--tripwire]
(-S: no site module, so no .pth file or sitecustomize runs; see zygote.WORKER_PYTHON.)
"""
import os
import sys


def _add_site_packages():
    """Started with -S: the judge's site-packages folders on the path, and the builtins the site
    module would add (exit, quit, help: a learner may call them), without reading any .pth file."""
    import site
    for folder in os.environ.get("GRADER_SITE_PACKAGES", "").split(os.pathsep):
        if folder and os.path.isdir(folder) and folder not in sys.path:
            sys.path.append(folder)
    site.setquit()
    site.setcopyright()
    site.sethelper()


if __name__ == "__main__":
    _add_site_packages()
    ROOT = sys.argv[3] if sys.argv[1] == "--portable" else sys.argv[1]
    sys.path.insert(0, ROOT)  # (-I: not there) for these imports alone; each main adds it again
    from grading.worker.portable import portable_main
    from grading.worker.zygote import zygote_main
    sys.path.remove(ROOT)  # and takes it away before any submission runs
    if sys.argv[1] == "--portable":
        portable_main(sys.argv[2], sys.argv[3], "--tripwire" in sys.argv[4:])
    elif sys.argv[2] == "--judge":
        zygote_main(sys.argv[1], [], [int(n) for n in sys.argv[3].split(",")])
    else:
        zygote_main(sys.argv[1], [int(fd) for fd in sys.argv[2].split(",")])
