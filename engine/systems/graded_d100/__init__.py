"""Seed 004, graded d100: a d100 under a graded hit chance, one defence a turn, momentum.

grades (the grade tables as functions), fight (the tracker and the hit chance), odds,
system.
"""

from tidetower.engine.systems.graded_d100.system import GradedSystem

__all__ = ["GradedSystem"]
