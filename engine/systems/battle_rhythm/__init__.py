"""Seed 003, the battle rhythm: the Count clock of declared actions, and Cast Lots.

rhythm (the clock and the lots as functions), attack (a declared attack), odds, system.
"""

from tidetower.engine.systems.battle_rhythm.system import BattleRhythmSystem

__all__ = ["BattleRhythmSystem"]
