"""kregress: a regression corpus and bisect bot for GPU kernel compilers."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("kregress")
except PackageNotFoundError:  # running from a source tree that was not installed
    __version__ = "0+unknown"
