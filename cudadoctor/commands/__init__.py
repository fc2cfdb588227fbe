"""One module per command: each only parses options, calls the engine and renders."""
