"""Broken: a segmentation fault (reading address 0 through ctypes)."""
import ctypes


def causal_softmax(scores):
    ctypes.string_at(0)
