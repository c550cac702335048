"""The wire between processes: typed frames, sockets, TLS, end-to-end encryption, the relay.

Bytes and connections only: nothing here knows parties, sessions or
protocols. The simulator never imports this layer.
"""
