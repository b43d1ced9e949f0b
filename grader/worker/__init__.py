"""The worker: the process that runs kernels (the interpreter hook, the compile check, budgets' records)."""
