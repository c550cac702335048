"""Running a program across processes and hosts: routing rounds over the wire, each
process's runtime, joining a run (TLS, relay), and the local launcher.
"""
