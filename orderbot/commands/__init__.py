"""One module per command; cli.py joins them."""
