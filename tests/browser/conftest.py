"""The browser test starts its controller and upstream with the client tests' helpers
(tests/clients/support.py), imported as `support`."""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "clients"))
