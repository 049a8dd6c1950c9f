# The wheel bundles liboutlive.so (copied into outlive/ by `make wheel`), so it
# is a platform wheel, not a pure-Python one.
from setuptools import setup
from setuptools.dist import Distribution


class BinaryDistribution(Distribution):
    def has_ext_modules(self):
        return True


setup(distclass=BinaryDistribution)
