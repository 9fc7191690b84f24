"""The tower's enclosure as code: its parameters and the geometry the camera needs (pure, for the
Pi too), and the printable parts (`cad/`, needing the `tidetower[cad]` extra)."""
