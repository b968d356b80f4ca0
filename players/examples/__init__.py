"""Example bots written with the bot kit (:mod:`players.bot`)."""
