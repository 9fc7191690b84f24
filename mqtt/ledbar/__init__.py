"""The LED bar node: the table's tracker on WLED, a WS2812 strip or the terminal, from MQTT."""
