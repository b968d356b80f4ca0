"""A bot that takes a move that wins at once when it sees one, else a random legal move."""

from players.bot import Bot


class GreedyBot(Bot):
    name = "Greedy"

    def start(self, game, role, clocks):
        self.moves_played = 0

    def wins(self, state):
        return self.game.is_terminal(state) and self.game.goal(state, self.role) == 100

    def play(self, state):
        moves = self.legal_moves(state)
        self.moves_played += 1
        for move in moves:
            if all(self.wins(after) for after in self.next_states(state, move)):
                return move
        return self.rng.choice(moves)

    def stop(self, state, goals):
        print(f"{self.role} scored {goals.get(self.role)} in {self.moves_played} moves")
