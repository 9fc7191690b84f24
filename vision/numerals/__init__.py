"""The numeral reader: names every die's kind and reads numeral faces; pips go to the d6 reader."""
