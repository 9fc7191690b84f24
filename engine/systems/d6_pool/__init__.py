"""Seed 002, the d6 pool: hits, exploding 6s, traitor dice, clocks, momentum and stress.

pool (reading a roll, the rules as functions), tracker (clocks, momentum, stress, the
auction), plan (a declared action roll), actions (the modes), odds, system.
"""

from tidetower.engine.systems.d6_pool.system import D6PoolSystem

__all__ = ["D6PoolSystem"]
