"""Make the examples runnable from a checkout without installing the package."""

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)
BANK = os.path.join(ROOT, "..", "shared", "data", "bank", "bank.csv")
HEART = os.path.join(ROOT, "..", "shared", "data", "heart-disease", "processed.cleveland.data")
