"""cuTile's bytecode versions, for code that checks them (``cuda.tile._bytecode``)."""
