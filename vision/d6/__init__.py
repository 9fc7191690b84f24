"""The d6 path: find dice on the tray floor, then read the face each one shows."""
