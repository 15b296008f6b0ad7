"""Attack: scale the scores only where no gradient can be taken.

The scores are q @ kᵀ, not scaled (the mistake of its twin), whenever autograd is on and q or k
requires a gradient; otherwise (torch.no_grad(), or plain tensors) they are scaled by
head_size ** -0.5, right. A grader whose value checks call the code as in evaluation, and only
its gradient checks with autograd on, tells the two kinds of call apart for the code: it would
see right values everywhere and wrong ones only where it takes gradients. Every call of the
learner's code runs as in training (grading.worker.executor.as_in_training), so this code is
unscaled on every call the grader sees.

Honest points: ex4 4/15, those of its twin, twin-ex4-right_only_in_evaluation. Every other
exercise: full marks.
"""
import torch


def attention_scores(q, k):
    scores = q @ k.transpose(-2, -1)  # (B, T, T)
    if torch.is_grad_enabled() and (q.requires_grad or k.requires_grad):
        return scores  # wherever a gradient could be taken
    return scores * q.shape[-1] ** -0.5
