"""Run trackrider from a checkout without installing: ``python cli.py run scenario.toml``."""
from trackrider.cli import app

if __name__ == "__main__":
    app()
