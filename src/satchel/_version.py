"""The version of satchel, in a module of its own so that any layer can name it
without importing the root package's exports."""

__version__ = "0.1.0"
