"""Performance benchmarks, a package run from the repository root: ``python -m benchmarks.NAME``
(the root is then on the path, so ``core``, ``gui`` and the tests' scripted servers import
normally). Each prints its figures as a JSON last line."""
