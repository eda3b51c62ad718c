"""Tests of the cellar package; `python3 -m unittest discover -s sdks/python/tests -t sdks/python`."""

import os
import sys

# The package from this checkout (src layout), whether or not it is also pip-installed.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src"))
