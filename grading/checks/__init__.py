"""What a test file of tests/ checks a submission with, in the judge: this module is its one face
(content/test_checks_face.py: test files import their checks from here alone, and every name here
is one they may use).

- scenario: grade marks (public, hidden), shape sets, drawing inputs, setting a module's weights;
- expect: checks on returned values (expect_tensor, expect_close, …), `fail`, and the named
  tolerances (CLOSE, ZERO, NO_GRADIENT, GRADIENT_CLOSE);
- shown_work: the worker's record of a call, replayed here, for the how-checks alone (no loop,
  built yourself); the gradients a call sends back (vjp);
- derivatives: gradients checked against finite differences.
The causes a failing exercise's outputs point to are grading.diagnosis's.
"""
from grading.checks.derivatives import expect_row_gradients, row_gradients
from grading.checks.expect import (
    CLOSE,
    GRADIENT_CLOSE,
    NO_GRADIENT,
    SHOULD_BE,
    ZERO,
    expect_close,
    expect_dtype,
    expect_gradients,
    expect_inputs_unchanged,
    expect_repeatable,
    expect_same_elsewhere,
    expect_sequence,
    expect_tensor,
    fail,
    same,
    sequence_name,
    upper_triangle,
)
from grading.checks.scenario import (
    SHAPES,
    draw_qkv,
    hidden,
    perturbed_tokens,
    positions,
    public,
    raises,
    randn,
    returned_or_raised,
    set_embedding,
    set_linear,
    trainable_shapes,
)
from grading.checks.shown_work import (
    LONG_T,
    expect_built_yourself,
    expect_calls_close,
    expect_no_loop,
    loops,
    named_gradients,
    shown_work,
    vjp,
)

__all__ = [
    # scenario
    "SHAPES", "draw_qkv", "hidden", "perturbed_tokens", "positions", "public", "raises", "randn", "returned_or_raised",
    "set_embedding", "set_linear", "trainable_shapes",
    # expect, and the tolerances
    "CLOSE", "GRADIENT_CLOSE", "NO_GRADIENT", "SHOULD_BE", "ZERO", "expect_close", "expect_dtype",
    "expect_gradients", "expect_inputs_unchanged", "expect_repeatable", "expect_same_elsewhere", "expect_sequence",
    "expect_tensor", "fail", "same", "sequence_name", "upper_triangle",
    # shown_work
    "LONG_T", "expect_built_yourself", "expect_calls_close", "expect_no_loop", "loops",
    "named_gradients", "shown_work", "vjp",
    # derivatives
    "expect_row_gradients", "row_gradients",
]
