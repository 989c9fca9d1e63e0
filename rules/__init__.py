"""The torchdoctor rule pack: one module per rule, discovered automatically.

Shipped inside the wheel as `torchdoctor.rules`. A module is named after its
rule (`td001_missing_zero_grad.py`) and defines exactly one `Rule` subclass.
"""
