"""The knowledge agent: hybrid retrieval over the user's documents, with reflection."""
