"""`calibrate`: where correct answers and unrelated questions fall for the configured embedder.

Apart from the service because it is a measurement, not a request: it runs recall's own pipeline
(core/recall.py) over a case set and suggests the floor and HIGH mark (docs/recall.md).
"""
