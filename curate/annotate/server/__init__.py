"""A local Argilla for a team without a deployment (the optional `argilla` extra): argilla-server
on SQLite in a subprocess (`process`), with a search engine that answers from that database
(`search_engine`)."""
