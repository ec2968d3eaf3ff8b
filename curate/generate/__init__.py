"""`curate generate`: questions made from the knowledge base, each candidate filtered (`filters`)
before it joins a dataset."""
