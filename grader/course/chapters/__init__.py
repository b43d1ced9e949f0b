"""The puzzles, one module per chapter (and notebook): each puzzle's cases, tolerance, budgets, hints and its
``Puzzle`` entry, together and named by its slug. ``grader/course/registry.py`` indexes them.

- ``warmup``: puzzles 1-3 (notebooks/01_warmup.ipynb)
- ``softmax``: puzzles 4-6 (notebooks/02_softmax_and_attention.ipynb)
- ``sparse_graphs``: puzzles 7-10 (notebooks/03_graph_attention.ipynb)
- ``tensor_cores``: puzzles 11-13 (notebooks/04_tensor_cores.ipynb)
- ``backward``: puzzles 14-18 (notebooks/05_backward.ipynb)
- ``online_softmax_hints``: the hints that puzzles 5, 6, 12 and 13 share
"""
