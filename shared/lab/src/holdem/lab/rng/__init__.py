"""The RNG report: the production shuffle through a certification-style battery of tests."""
