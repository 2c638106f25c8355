"""`tpucheck trace`: confirm at run time which ATen operators a model reaches.

The one part of tpucheck that runs a user's code, and so the one part kept apart: the
parent side (this package minus `child`, `harness`, `recorder` and `device`) never imports
torch or the user's modules; it starts `python -m tpucheck.trace.child` in a sandbox, reads
the JSON report the child writes, and judges the operators it saw against the target's
dispatcher table (`rules/op-status.json`).
"""
