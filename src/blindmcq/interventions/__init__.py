"""Repairs of a leaking bank, measured on the same items: distractor rewriting and AnswerPool.

``rewrite`` makes a new bank version (distractors rewritten, keys untouched, provenance per item);
``answerpool`` pools the options of several items and scores assignment with abstention;
``compare`` turns predictions into before/after and pooled/ordinary tables.
"""
