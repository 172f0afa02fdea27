"""``python -m satchel``: the same as the ``satchel`` command."""

from satchel.cli import main

if __name__ == "__main__":
    main()
