"""orderbot: a command-line order-query assistant with a bounded, inspectable loop."""

__version__ = "0.1.0"
