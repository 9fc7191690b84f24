"""Seed 001, the Tide of Battle: a signed lean toward one side that bonuses its attacks.

tide (the tracker and what shifts it), system.
"""

from tidetower.engine.systems.tide_of_battle.system import BattleTideSystem

__all__ = ["BattleTideSystem"]
