"""The Commission's PDF question bank: two independent extraction paths, one assembler, verification.

Entry point for a pipeline stage: :func:`blindmcq.corpus.extract.extract_pdfs`.
"""
