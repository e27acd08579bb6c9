"""What the tests share, in modules that are not tests (pytest collects nothing here): scripted worlds,
record builders, stores, the clients and servers the tests drive. A test module imports from here (and
from ``bench.shared`` for the bench harnesses), never from another test module or a conftest; the
fixtures themselves are in ``conftest.py`` files (``tests/conftest.py``: those several folders use)."""
