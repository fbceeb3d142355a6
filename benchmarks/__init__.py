"""Scripts that print the figures the docs quote, each with the command that produced them."""
