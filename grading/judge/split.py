"""Two judges for one submission: its exercises shared out between this judge and one it forks.

A judge spends most of a grading run waiting for its worker, and the worker for it: one pair
keeps one core busy. On a machine with two cores or more, a single grading run (not a batch,
whose judges already fill the cores) forks a second judge once the tests are collected:

    judge ──fork──► second judge          each takes the next exercise nobody has taken
      │                  │                (one byte of a pipe each: exercises[byte]),
    worker(exA)       worker(exB)          the later exercises first (they are the longer),
      …                  …                and grades it as it would alone, with its own worker
                                          (a zygote connection of its own: Zygote.connection)

The second judge sends each exercise's results back as soon as it has graded it, and ends when
no exercise is left. This judge takes those results as its own; an exercise the second judge
took but never sent back (it died) is graded here. Which judge grades an exercise changes
nothing in its grade: every draw is seeded by the run's seed and the test's id (plugin.seed_for),
every exercise has a worker of its own.
"""
import os
import pickle
import signal


def cores():
    """How many CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def run_shared(plugin, session, groups):
    """Run `groups` ({exercise: [its items, in order]}) in this judge and a second one; the
    exercises the second one graded, in the order it sent them back. None, having run nothing,
    when no second judge could start (no zygote connection, no process): this one runs all."""
    from grading.errors import GradingError
    from grading.walls import kernel  # (Linux: the backends that fork judges are)
    order = list(reversed(groups))  # the heaviest first: the later exercises build on the earlier
    try:
        connection = plugin.backend.connection()
    except GradingError:
        return None
    claims_read, claims_write = os.pipe()
    os.write(claims_write, bytes(range(len(order))))
    os.close(claims_write)
    results_read, results_write = os.pipe()
    parent = os.getpid()
    try:
        pid = os.fork()
    except OSError:  # no more processes (a process limit): one judge is enough
        for fd in (claims_read, results_read, results_write):
            os.close(fd)
        connection.close()
        return None
    if pid == 0:  # the second judge
        code = 1
        try:
            os.close(results_read)
            kernel.die_with_parent(parent)
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # the first judge ends it on Ctrl-C
            plugin.backend = connection
            with os.fdopen(results_write, "wb") as out:
                while claim := os.read(claims_read, 1):
                    exercise = order[claim[0]]
                    _run(session, groups[exercise])
                    pickle.dump(_results_of(plugin, exercise), out)
                    out.flush()
            connection.close()
            code = 0
        finally:
            os._exit(code)
    os.close(results_write)
    connection.close()  # the second judge's alone now
    mine, done = set(), False
    try:
        while claim := os.read(claims_read, 1):
            exercise = order[claim[0]]
            mine.add(exercise)
            _run(session, groups[exercise])
        delivered = []
        with os.fdopen(results_read, "rb") as results:
            while True:
                try:
                    exercise, found, diagnosis = pickle.load(results)
                except Exception:  # noqa: BLE001  (its end, or a message cut by its death:
                    break  # what it did not send whole is graded here)
                plugin.results.extend(found)
                if diagnosis is not None:
                    plugin.diagnoses[exercise] = diagnosis
                delivered.append(exercise)
        for exercise in order:  # taken by the second judge, which ended before it was graded
            if exercise not in mine and exercise not in delivered:
                _run(session, groups[exercise])
        done = True
    finally:
        os.close(claims_read)
        if not done:  # interrupted (Ctrl-C): the second judge stops too
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        os.waitpid(pid, 0)
    return delivered


def _results_of(plugin, exercise):
    return (exercise, [r for r in plugin.results if r.exercise == exercise],
            plugin.diagnoses.get(exercise))


def _run(session, items):
    """pytest's own run loop (_pytest.main.pytest_runtestloop), on one exercise's items: its
    last item has no next one, so its exercise is finished in its teardown."""
    for i, item in enumerate(items):
        nextitem = items[i + 1] if i + 1 < len(items) else None
        item.config.hook.pytest_runtest_protocol(item=item, nextitem=nextitem)
        if session.shouldfail:
            raise session.Failed(session.shouldfail)
        if session.shouldstop:
            raise session.Interrupted(session.shouldstop)
