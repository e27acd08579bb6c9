"""epigraph's benchmarks, one tool: ``python -m bench NAME [ARGS...]`` from the repository's root
(``python -m bench`` lists them). See ``bench/README.md``: what each measures, how to run it, where it
writes. Never imported by the package; the tests import its harnesses (``bench.shared``)."""
