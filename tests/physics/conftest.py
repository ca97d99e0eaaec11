import os

os.environ.setdefault("NUMBA_CACHE_DIR", "/tmp/numba_physics")
