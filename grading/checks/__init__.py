"""What a test file uses to check a submission, in the judge:

- scenario: grade marks (public, hidden), shape sets, drawing inputs, setting a module's weights;
- expect: checks on returned values (expect_tensor, expect_close, …) and `fail`;
- shown_work: the worker's record of a call, replayed here (no loop, built yourself, Consistent);
- derivatives: gradients checked against finite differences.
The causes a failing exercise's outputs point to are grading.diagnosis's.
"""
