"""Seed 000, the Tide: Marks pools, opposed replies and the shared Tide bar with its Omens.

track (the bar), marks (faces to Marks), odds, practice (a simulated table), system.
"""

from tidetower.engine.systems.tide.system import TideSystem

__all__ = ["TideSystem"]
