"""The application layer: command line, HTTP server and web page, BioGen batch runs and run files,
reports, the Python API façade. It composes the index, the agent and the evaluator; nothing imports it."""
