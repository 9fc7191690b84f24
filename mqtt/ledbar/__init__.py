"""The LED bar node: the Tide bar on WLED, a WS2812 strip or the terminal, from MQTT."""
