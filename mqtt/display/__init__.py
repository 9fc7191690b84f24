"""The display node: the table's page (HTML, scripts, style) and the server that serves it."""
