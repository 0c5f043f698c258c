"""What every room of the package shares: the result objects (``results``), the component
registry and base, parameter validation, progress lines, private files and their lock.

Nothing here imports another budgetctx room (build, chat, batch, cli, serve, eval): the
component packages and every room import from here, never the other way round.
"""
