"""Tools and stores: storage connections, vector / lexical / hybrid search, code execution."""
