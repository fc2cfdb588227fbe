"""Readers: pasted text (collect_env, nvidia-smi, deviceQuery, package lists, whole issues) -> facts.

Each reader is a pure function of the text: no I/O, no guessing. A value the text does not
state stays missing; what was read is kept as evidence.
"""
