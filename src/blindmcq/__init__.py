"""blindmcq: can a multiple-choice benchmark be answered without its question?"""

__version__ = "0.1.0"
