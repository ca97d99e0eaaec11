import os
import sys

os.environ.setdefault("NUMBA_CACHE_DIR", "/tmp/numba_physics")
sys.path.insert(0, os.path.dirname(__file__))
