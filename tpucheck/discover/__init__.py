"""Stage one: which files there are, what kind each is, and how to read their text
(discovery walk, git index, decoding, positions in text)."""
