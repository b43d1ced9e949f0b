"""The judge: the grader's own process. It reads a submission without running it, starts workers, and judges
what they send back. It never imports the worker's modules."""
