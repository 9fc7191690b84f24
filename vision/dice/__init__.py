"""The table's own dice: each taught by throwing it, each read by a reader of its own."""
