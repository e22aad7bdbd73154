"""The shared parts of every benchmark: the corpus, the fill, the probes that time a service."""
