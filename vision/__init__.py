"""Tide Tower vision: read the dice in a photo of the tray (see docs/vision.md)."""
