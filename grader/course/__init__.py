"""The course: what each puzzle is (its spec, cases, tolerance, budgets and hints), by chapter."""
