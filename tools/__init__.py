"""Project tools (not part of the installed packages): the layer table and its checks, doc
generators. Run from the repository root."""
