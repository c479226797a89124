"""The design's retrieval evaluation ("How retrieval is judged"): needles, recall@k, MRR, Wilson intervals,
paired sign tests, threshold sweeps of the refusal gate, the report and its plots.
"""
