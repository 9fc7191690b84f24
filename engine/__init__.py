"""Tide Tower."""
