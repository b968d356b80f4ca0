"""Remote bots: checking that a player speaks the protocol as real servers expect."""
