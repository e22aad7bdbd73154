"""The local embedders: models that run on this machine, no network and nothing downloaded.

MiniLM (English) by onnxruntime, multilingual-e5 by a small C engine; each splits into an async
front (embedder.py, multilingual.py) and a blocking half run on a worker thread (minilm.py,
e5.py), so the event loop never waits on a model.
"""
