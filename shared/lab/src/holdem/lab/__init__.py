"""The lab: statistical evidence about the game, kept out of the core and the services."""
